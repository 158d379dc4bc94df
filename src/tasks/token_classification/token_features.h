// run_ner.py's features: each example's words through the tokenizer as pre-split words (is_split_into_words)
// with truncation=True at max_seq_length and the tokenizer's special tokens, unpadded, and their labels
// aligned to tokens through the encoding's word ids (ner_labels.h: the first sub-token of a word carries its
// label, the others -100 or, with --label_all_tokens, the word's label with B- turned into I-).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tasks/cached_features.h"
#include "text/hf_tokenizer.h"

namespace ct::tasks {

struct TokenFeatures {
  std::vector<std::vector<int32_t>> input_ids, token_type_ids;
  std::vector<std::vector<int32_t>> labels;  // per token; -100 where no label counts
  int64_t size() const { return static_cast<int64_t>(input_ids.size()); }
};

// `words[i]` are example i's words and `word_labels[i]` their label ids (may be empty: no labels). The
// tokenizer's truncation is set to (max_seq_length, longest_first) for the call and restored afterwards.
TokenFeatures build_token_features(text::HfTokenizer& tokenizer,
                                   const std::vector<std::vector<std::string>>& words,
                                   const std::vector<std::vector<int64_t>>& word_labels,
                                   int64_t max_seq_length, bool label_all_tokens,
                                   const std::vector<int64_t>& b_to_i);

// from_pretrained's keyword arguments run_ner's tokenizer gets for a config.json `model_type`: transformers
// requires add_prefix_space=True for pre-split words with byte-level BPE (roberta, deberta, gpt2, bloom).
nlohmann::json split_words_overrides(const std::string& model_type);

// The same through the split's feature cache (tasks/cached_features.h), keyed by the words, their label ids
// and the three options.
TokenFeatures cached_token_features(const SplitCache& cache, text::HfTokenizer& tokenizer,
                                    const std::vector<std::vector<std::string>>& words,
                                    const std::vector<std::vector<int64_t>>& word_labels,
                                    int64_t max_seq_length, bool label_all_tokens,
                                    const std::vector<int64_t>& b_to_i);

}  // namespace ct::tasks

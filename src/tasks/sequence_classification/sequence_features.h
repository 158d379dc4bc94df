// run_glue.py's and run_classification.py's features: each example's one or two texts through the tokenizer
// with truncation=True (longest_first) at max_seq_length and the tokenizer's special tokens, unpadded
// (padding is the collator's business: max_length or packed batches, see sequence_classification_split.h).
// Labels are the caller's: class ids after label_to_id, or floats for a regression.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tasks/cached_features.h"
#include "text/hf_tokenizer.h"

namespace ct::tasks {

struct TextPair {
  std::string first;
  std::optional<std::string> second;
};

struct SequenceFeatures {
  std::vector<std::vector<int32_t>> input_ids, token_type_ids;
  int64_t size() const { return static_cast<int64_t>(input_ids.size()); }
};

// Tokenizes `texts` in parallel. The tokenizer's truncation is set to (max_seq_length, longest_first) for the
// call, as transformers' __call__ sets it, and restored afterwards. Fails naming the example when a text is
// not valid UTF-8.
SequenceFeatures build_sequence_features(text::HfTokenizer& tokenizer, const std::vector<TextPair>& texts,
                                         int64_t max_seq_length);

// The same through the split's feature cache (tasks/cached_features.h), keyed by the texts and
// max_seq_length.
SequenceFeatures cached_sequence_features(const SplitCache& cache, text::HfTokenizer& tokenizer,
                                          const std::vector<TextPair>& texts, int64_t max_seq_length);

}  // namespace ct::tasks

// QA features as HF run_qa's prepare_train_features / prepare_validation_features make them with a fast
// tokenizer: [CLS] question [SEP] context-window [SEP], only the context truncated, windows of the context
// budget (max_seq_length - question tokens - 3) starting every budget - doc_stride tokens (doc_stride is the
// OVERLAP, HF tokenizers' semantics), start/end token labels (first answer; [CLS] = 0 when the answer is not
// fully inside the window), and per-token context offsets for post-processing.
//
// Storage is compact: each example's question and context are tokenized once, and a feature is a window into
// them; rows of ids/type ids/mask are materialized per batch by collate().
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tasks/question_answering/squad.h"
#include "text/hf_tokenizer.h"
#include "text/tokenizer.h"

namespace ct::tasks {

struct FeatureOptions {
  int64_t max_seq_length = 384;
  int64_t doc_stride = 128;
  bool pad_to_max_length = true;   // false: pad each batch to its longest feature (DataCollatorWithPadding)
  int64_t pad_to_multiple_of = 0;  // dynamic padding only; 0 = none
};

// Byte span [begin, end) in an example's context.
struct Span {
  int32_t begin = 0;
  int32_t end = 0;
  bool operator==(const Span&) const = default;
};

struct TokenizedExample {
  std::vector<int32_t> question_ids;
  std::vector<int32_t> context_ids;
  std::vector<Span> context_offsets;
};

struct Feature {
  int64_t example_index = 0;
  int32_t context_begin = 0;   // first window token, as an index into the example's context tokens
  int32_t context_len = 0;     // context tokens in the window
  int32_t start_position = 0;  // label: token index in this feature's sequence ([CLS] = 0 when not inside)
  int32_t end_position = 0;
};

// Where a feature's tokens come from: prefix, question, middle, context window, suffix, each part with its
// token type id. BERT: [CLS] q [SEP] c [SEP], types 0 0 0 1 1; RoBERTa/XLM-R: <s> q </s></s> c </s>, all 0
// (their tokenizers give the model no token_type_ids). The [CLS] of impossible answers is token 0.
struct SequenceLayout {
  std::vector<int32_t> prefix, middle, suffix;
  std::vector<int32_t> prefix_types, middle_types, suffix_types;
  int32_t question_type = 0, context_type = 1;
  size_t num_special() const { return prefix.size() + middle.size() + suffix.size(); }
  bool operator==(const SequenceLayout&) const = default;
};

// One batch of rows, row-major [batch_size, seq_len].
struct Batch {
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  std::vector<int32_t> input_ids;
  std::vector<int32_t> token_type_ids;
  std::vector<int32_t> attention_mask;
  std::vector<int64_t> start_positions;
  std::vector<int64_t> end_positions;
  std::vector<int64_t> feature_indices;
  // Packed batches (collate_packed): the rows' tokens end to end, one length per row, no attention_mask;
  // seq_len is then max_seq_length (the padded length every row fits). Empty for padded batches.
  std::vector<int32_t> lengths;
};

class FeatureSet {
 public:
  // Tokenizes every example (in parallel) and cuts its windows. Throws ct::Error naming --max_seq_length or
  // --doc_stride and the example id when a question leaves no room for the context, or the overlap is not
  // smaller than the context budget (HF's tokenizers reject both).
  static FeatureSet build(const std::vector<Example>& examples, const text::Tokenizer& tokenizer,
                          FeatureOptions options);
  // The same from any tokenizer.json pipeline, as run_qa does with a fast tokenizer (pad_on_right): each
  // example is encoded as the pair (question.lstrip(), context) with the tokenizer's own post-processor, and
  // the context tokens are cut into HF's only_second stride windows. `token_type_ids` false: every type id is
  // 0 (tokenizers whose model_input_names lack token_type_ids: RoBERTa, XLM-R, CamemBERT). The tokenizer must
  // have no truncation or padding set. model_max_length is checked by the caller.
  static FeatureSet build(const std::vector<Example>& examples, const text::HfTokenizer& tokenizer,
                          FeatureOptions options, int32_t pad_id, bool token_type_ids);

  int64_t size() const { return static_cast<int64_t>(features_.size()); }
  const Feature& operator[](int64_t i) const { return features_[static_cast<size_t>(i)]; }
  const std::vector<Feature>& features() const { return features_; }
  const TokenizedExample& tokenized(int64_t example_index) const {
    return examples_[static_cast<size_t>(example_index)];
  }
  const FeatureOptions& options() const { return options_; }

  const SequenceLayout& layout() const { return layout_; }
  // Unpadded length of feature i: question + window + the special tokens.
  int64_t length(int64_t i) const;
  // Index of the first context token in feature i's sequence (prefix + question tokens + middle).
  int64_t context_start(int64_t i) const;
  // Byte span in the example's context of token t of feature i; nullopt for [CLS]/question/[SEP]/padding
  // (HF's offset_mapping None).
  std::optional<Span> offset(int64_t i, int64_t t) const;
  // Token ids of feature i, unpadded.
  std::vector<int32_t> input_ids(int64_t i) const;

  // max_train_samples / max_eval_samples after feature creation: keep the first n features.
  void keep_first(int64_t n);

  // Rows for `indices` (feature indices), padded to max_seq_length or to the longest row (dynamic padding).
  Batch collate(std::span<const int64_t> indices) const;
  // The same rows with no padding at all (--pad_to_max_length False): tokens end to end, `lengths` set.
  Batch collate_packed(std::span<const int64_t> indices) const;

 private:
  friend class FeatureSetIO;  // feature_cache.cpp: the on-disk form
  // Cuts every tokenized example into windows and labels them (examples_, layout_, options_ set).
  void cut_windows(const std::vector<Example>& examples);
  // The token type id of position k of a feature whose question has q tokens and window c tokens.
  void fill_types(int64_t q, int64_t c, int32_t* out) const;
  std::vector<TokenizedExample> examples_;
  std::vector<Feature> features_;
  FeatureOptions options_;
  SequenceLayout layout_;
  int32_t pad_id_ = 0;
};

// HF's question.lstrip(): drops leading Unicode whitespace (Python str.isspace).
std::string_view lstrip_unicode(std::string_view s);

}  // namespace ct::tasks

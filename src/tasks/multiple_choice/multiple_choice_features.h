// run_swag.py's features: each example becomes one row per ending, the pair (context, "header ending")
// through the tokenizer with truncation=True (longest_first) at max_seq_length and the tokenizer's special
// tokens, unpadded (padding is the collator's business: max_length or packed batches, see
// multiple_choice_split.h). The caller maps its columns (SWAG's sent1, sent2, ending0..ending3, label) into
// MultipleChoiceExample, so other column names need no change here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tasks/cached_features.h"
#include "text/hf_tokenizer.h"

namespace ct::tasks {

// run_swag's ending_names: ending0..ending3.
inline constexpr int64_t kSwagNumChoices = 4;

struct MultipleChoiceExample {
  std::string context;               // sent1: the first text of every row
  std::string header;                // sent2: starts every row's second text
  std::vector<std::string> endings;  // ending0..ending3
  int64_t label = 0;                 // the right ending
};

struct MultipleChoiceFeatures {
  int64_t num_choices = kSwagNumChoices;
  // Example-major rows: example i's ending c is row i * num_choices + c, as run_swag's flattened batch.
  std::vector<std::vector<int32_t>> input_ids, token_type_ids;
  std::vector<int64_t> labels;  // one per example
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
  int64_t row_length(int64_t row) const {
    return static_cast<int64_t>(input_ids[static_cast<size_t>(row)].size());
  }
};

// Tokenizes every example's rows in parallel. The tokenizer's truncation is set to (max_seq_length,
// longest_first) for the call, as transformers' __call__ sets it, and restored afterwards. Fails naming the
// example when it has other than kSwagNumChoices endings, a label outside 0..3, or text that is not valid
// UTF-8.
MultipleChoiceFeatures build_multiple_choice_features(text::HfTokenizer& tokenizer,
                                                      const std::vector<MultipleChoiceExample>& examples,
                                                      int64_t max_seq_length);

// The same through the split's feature cache (tasks/cached_features.h), keyed by the examples and
// max_seq_length.
MultipleChoiceFeatures cached_multiple_choice_features(const SplitCache& cache, text::HfTokenizer& tokenizer,
                                                       const std::vector<MultipleChoiceExample>& examples,
                                                       int64_t max_seq_length);

}  // namespace ct::tasks

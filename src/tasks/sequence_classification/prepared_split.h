// A sequence-classification split ready for the Trainer: its features and labels built from texts, kept
// alive beside the split that refers to them (run_glue and run_classification both end their preprocessing
// here).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tasks/sequence_classification/sequence_classification_split.h"
#include "tasks/sequence_classification/sequence_features.h"
#include "text/hf_tokenizer.h"

namespace ct::tasks {

struct PreparedSequences {
  SequenceFeatures features;
  std::unique_ptr<SequenceClassificationSplit> split;
  int64_t examples = 0;
};

// Tokenizes `texts` at options.max_seq_length (or reads their features from `cache`) and builds the split
// over them with `labels` (class ids) or `float_labels` (regression values, or multi-hot rows), either may be
// empty.
std::unique_ptr<PreparedSequences> prepare_sequences(const SplitCache& cache,
                                                     const std::vector<TextPair>& texts,
                                                     std::vector<int64_t> labels,
                                                     std::vector<float> float_labels,
                                                     text::HfTokenizer& tokenizer,
                                                     const SequenceClassificationOptions& options);

}  // namespace ct::tasks

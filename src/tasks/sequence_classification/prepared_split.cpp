#include "tasks/sequence_classification/prepared_split.h"

namespace ct::tasks {

std::unique_ptr<PreparedSequences> prepare_sequences(const SplitCache& cache,
                                                     const std::vector<TextPair>& texts,
                                                     std::vector<int64_t> labels,
                                                     std::vector<float> float_labels,
                                                     text::HfTokenizer& tokenizer,
                                                     const SequenceClassificationOptions& options) {
  auto p = std::make_unique<PreparedSequences>();
  p->features = cached_sequence_features(cache, tokenizer, texts, options.max_seq_length);
  p->examples = static_cast<int64_t>(texts.size());
  p->split = std::make_unique<SequenceClassificationSplit>(p->features, std::move(labels),
                                                           std::move(float_labels), options);
  return p;
}

}  // namespace ct::tasks

// Token classification (run_ner) as a task of the Trainer (train/task_split.h): token_features.h's features,
// collated padded to max_seq_length (--pad_to_max_length) or packed, with per-token labels (-100 where no
// label counts, and at padding). Each feature's prediction row holds the argmax label id of each of its
// tokens (-100 past its length): run_ner's compute_metrics needs only those. Scoring is seqeval over the
// tokens whose label is not -100, with run_ner's keys, and predictions.txt for the predict split.
#pragma once

#include <string>
#include <vector>

#include "tasks/token_classification/token_features.h"
#include "train/task_split.h"

namespace ct::tasks {

struct TokenClassificationOptions {
  int64_t max_seq_length = 128;
  bool pad_to_max_length = false;  // run_ner's default
  int32_t pad_token_id = 0;
  std::vector<std::string> label_list;  // id -> tag ("O", "B-PER", ...)
  bool return_entity_level_metrics = false;
};

class TokenClassificationSplit : public train::TaskSplit {
 public:
  // The split keeps a reference to `features`.
  TokenClassificationSplit(const TokenFeatures& features, TokenClassificationOptions options);

  int64_t num_examples() const override { return features_.size(); }
  int64_t num_features() const override { return features_.size(); }
  int64_t feature_length(int64_t i) const override;
  int64_t max_seq_length() const override { return o_.max_seq_length; }
  bool packed() const override { return !o_.pad_to_max_length; }
  train::CollatedBatch collate(std::span<const int64_t> features, bool labels) const override;
  bool token_labels() const override { return true; }
  bool has_labels() const override { return !features_.labels.empty(); }

  int64_t prediction_width() const override { return o_.max_seq_length; }
  void prediction_rows(const train::CollatedBatch& batch, const std::vector<float>& logits,
                       float* rows) const override;
  nlohmann::json score(const std::vector<float>& rows, const std::string& split, bool write_files,
                       const std::string& output_dir) const override;

 private:
  const TokenFeatures& features_;
  TokenClassificationOptions o_;
};

}  // namespace ct::tasks

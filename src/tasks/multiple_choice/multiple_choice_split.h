// Multiple choice (run_swag) as a task of the Trainer (train/task_split.h): one Trainer feature is one
// example, collated as its num_choices rows (multiple_choice_features.h) so a batch of B examples is the
// model's [B x num_choices] rows with batch.num_choices set and labels [B], as DataCollatorForMultipleChoice
// flattens it. Rows are padded to max_seq_length (--pad_to_max_length) or packed (no pad rows: what the
// collator's padding to the batch's longest row computes for the real tokens; the sequence head reads each
// packed row's first token, so the logits are the same). Each example's prediction row is its num_choices
// logits; scoring is run_swag's compute_metrics: accuracy of the argmax.
#pragma once

#include <string>
#include <vector>

#include "tasks/multiple_choice/multiple_choice_features.h"
#include "train/task_split.h"

namespace ct::tasks {

struct MultipleChoiceOptions {
  int64_t max_seq_length = 128;
  bool pad_to_max_length = false;  // run_swag's default
  int32_t pad_token_id = 0;
};

class MultipleChoiceSplit : public train::TaskSplit {
 public:
  // The split keeps a reference to `features`.
  MultipleChoiceSplit(const MultipleChoiceFeatures& features, MultipleChoiceOptions options);

  int64_t num_examples() const override { return features_.size(); }
  int64_t num_features() const override { return features_.size(); }
  // The longest of the example's rows, not their sum: --group_by_length exists to cut padding, and a padded
  // batch of B examples is [B x num_choices, longest row in the batch] (DataCollatorForMultipleChoice), so
  // examples whose longest rows are alike share batches. (The Trainer's FLOPs and throughput count each row
  // through CollatedBatch::real_lengths instead.) HF's LengthGroupedSampler measures len(input_ids), which is
  // num_choices for every example: no grouping at all.
  int64_t feature_length(int64_t i) const override;
  int64_t max_seq_length() const override { return o_.max_seq_length; }
  bool packed() const override { return !o_.pad_to_max_length; }
  train::CollatedBatch collate(std::span<const int64_t> features, bool labels) const override;
  bool has_labels() const override { return true; }

  int64_t prediction_width() const override { return features_.num_choices; }
  void prediction_rows(const train::CollatedBatch& batch, const std::vector<float>& logits,
                       float* rows) const override;
  // {"accuracy"}: the share of examples whose first maximal logit (numpy's argmax) is the label, computed in
  // float32 as run_swag's (preds == label_ids).astype(np.float32).mean().
  nlohmann::json score(const std::vector<float>& rows, const std::string& split, bool write_files,
                       const std::string& output_dir) const override;

 private:
  const MultipleChoiceFeatures& features_;
  MultipleChoiceOptions o_;
};

}  // namespace ct::tasks

// Sequence classification (run_glue, run_classification) as a task of the Trainer (train/task_split.h):
// features from sequence_features.h, collated padded to max_seq_length (--pad_to_max_length, HF's default) or
// packed (no pad rows: what HF's per-batch padding computes for the real tokens); labels as class ids
// (single-label) or floats (regression: one per example; multi-label: a 0/1 row per example). Each feature's
// prediction row is its logits; scoring follows the script: run_glue's metric for its task (or accuracy / mse
// for local files), micro F1 for multi-label, with `combined_score` when there are several, and the
// predict_results file.
#pragma once

#include <string>
#include <vector>

#include "tasks/sequence_classification/sequence_features.h"
#include "train/task_split.h"

namespace ct::tasks {

enum class LabelKind { single_label, regression, multi_label };

struct SequenceClassificationOptions {
  int64_t max_seq_length = 128;
  bool pad_to_max_length = true;
  int32_t pad_token_id = 0;
  int64_t num_labels = 2;
  LabelKind kind = LabelKind::single_label;
  std::string task_name;                // a GLUE task (its metric), or "" (accuracy / mse / micro f1)
  std::string metric_name;              // run_classification's --metric_name (evaluate_metric.h), or ""
  std::vector<std::string> label_list;  // id -> name, for the prediction file
  std::string predict_file_name = "predict_results.txt";
};

class SequenceClassificationSplit : public train::TaskSplit {
 public:
  // `labels`: one class id per feature (single-label; all -1: unlabelled, as GLUE's test sets);
  // `float_labels`: one value per feature (regression) or num_labels 0/1 values (multi-label). Either may be
  // empty (no labels: predictions only). The split keeps references to everything it is given.
  SequenceClassificationSplit(const SequenceFeatures& features, std::vector<int64_t> labels,
                              std::vector<float> float_labels, SequenceClassificationOptions options);

  int64_t num_examples() const override { return features_.size(); }
  int64_t num_features() const override { return features_.size(); }
  int64_t feature_length(int64_t i) const override;
  int64_t max_seq_length() const override { return o_.max_seq_length; }
  bool packed() const override { return !o_.pad_to_max_length; }
  train::CollatedBatch collate(std::span<const int64_t> features, bool labels) const override;
  bool has_labels() const override { return labelled_; }

  int64_t prediction_width() const override { return o_.num_labels; }
  void prediction_rows(const train::CollatedBatch& batch, const std::vector<float>& logits,
                       float* rows) const override;
  nlohmann::json score(const std::vector<float>& rows, const std::string& split, bool write_files,
                       const std::string& output_dir) const override;

  // The predicted class of each row (argmax, first maximum as numpy's), or the multi-hot cells (logit > 0).
  std::vector<int64_t> predicted_ids(const std::vector<float>& rows) const;

 private:
  const SequenceFeatures& features_;
  std::vector<int64_t> labels_;
  std::vector<float> float_labels_;
  SequenceClassificationOptions o_;
  bool labelled_ = false;
};

}  // namespace ct::tasks

// Extractive QA as a task of the Trainer (train/task_split.h): run_qa's features (question + context windows
// with start/end positions), collated padded or packed; each feature's prediction row is its start logits
// then its end logits over the split's longest feature (-100 past its own length, as HF pads logits across
// batches); the rows are post-processed into answers (n-best), scored with the official SQuAD v1.1/v2.0
// metrics, and written as {split}_predictions.json / {split}_nbest_predictions.json.
#pragma once

#include <string>
#include <vector>

#include "tasks/question_answering/qa_args.h"
#include "tasks/question_answering/qa_features.h"
#include "tasks/question_answering/squad.h"
#include "train/task_split.h"

namespace ct::tasks {

struct QaDataset {
  std::vector<Example> examples;
  FeatureSet features;
};

// Model inputs of every eval feature as the eval loop fed them, plus each token's context byte span, for
// checking logits against another implementation (--dump_eval_features).
void dump_eval_features(const std::string& path, const QaDataset& eval, int64_t eval_batch_size);

class QuestionAnsweringSplit : public train::TaskSplit {
 public:
  // `ds` must outlive the split. `has_answers` false: a test file without answers (predictions, no scores).
  QuestionAnsweringSplit(const QaDataset& ds, const QaDataArguments& args, bool has_answers = true);

  int64_t num_examples() const override { return static_cast<int64_t>(ds_.examples.size()); }
  int64_t num_features() const override { return ds_.features.size(); }
  int64_t feature_length(int64_t i) const override { return ds_.features.length(i); }
  int64_t max_seq_length() const override { return args_.max_seq_length; }
  bool packed() const override { return !ds_.features.options().pad_to_max_length; }
  train::CollatedBatch collate(std::span<const int64_t> features, bool labels) const override;

  int64_t prediction_width() const override { return 2 * T_; }
  void prediction_rows(const train::CollatedBatch& batch, const std::vector<float>& logits,
                       float* rows) const override;
  // {exact_match, f1} (v2: exact, f1, total, HasAns_*, ...); {} without answers.
  nlohmann::json score(const std::vector<float>& rows, const std::string& split, bool write_files,
                       const std::string& output_dir) const override;

 private:
  const QaDataset& ds_;
  const QaDataArguments& args_;
  bool has_answers_;
  int64_t T_ = 0;  // the longest feature (max_seq_length when padded): each logit row's length
};

}  // namespace ct::tasks

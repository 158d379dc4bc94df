// Masked language modelling (run_mlm) as a task of the Trainer (train/task_split.h): fixed-length chunks from
// group_texts (or one line each with --line_by_line), masked at collation by mlm_masking.h with the batch's
// (epoch, position) key, so every epoch draws new masks and any rank, world size or resume draws the same
// ones; evaluation uses the eval key, so its masks are the same every run. The masked positions are the
// labels, which is also what makes the head project only them. Each feature's prediction row holds the argmax
// token at its masked positions (-100 elsewhere), as run_mlm's preprocess_logits_for_metrics keeps; scoring
// is evaluate's accuracy over the masked positions.
#pragma once

#include <string>
#include <vector>

#include "tasks/group_texts.h"
#include "tasks/masked_lm/mlm_masking.h"
#include "train/task_split.h"

namespace ct::tasks {

struct MaskedLmOptions {
  int64_t max_seq_length = 512;
  bool pad_to_max_length = false;
  int32_t pad_token_id = 0;
  MaskingOptions masking;  // mlm_probability, mask token, vocabulary size, seed
};

class MaskedLmSplit : public train::TaskSplit {
 public:
  // The split keeps a reference to `chunks`.
  MaskedLmSplit(const std::vector<TokenChunk>& chunks, MaskedLmOptions options);

  int64_t num_examples() const override { return static_cast<int64_t>(chunks_.size()); }
  int64_t num_features() const override { return static_cast<int64_t>(chunks_.size()); }
  int64_t feature_length(int64_t i) const override;
  int64_t max_seq_length() const override { return o_.max_seq_length; }
  bool packed() const override { return !o_.pad_to_max_length; }
  // Outside the Trainer (no key): the evaluation masks, keyed by feature index.
  train::CollatedBatch collate(std::span<const int64_t> features, bool labels) const override;
  train::CollatedBatch collate(std::span<const int64_t> features, bool labels,
                               const train::BatchKey& key) const override;
  bool token_labels() const override { return true; }
  bool has_labels() const override { return true; }

  int64_t prediction_width() const override { return o_.max_seq_length; }
  void prediction_rows(const train::CollatedBatch& batch, const std::vector<float>& logits,
                       float* rows) const override;
  // {accuracy} over the masked positions of the evaluation masks.
  nlohmann::json score(const std::vector<float>& rows, const std::string& split, bool write_files,
                       const std::string& output_dir) const override;

  // Feature i's input ids and labels under the evaluation masks (what collate gives it outside training).
  void eval_masked(int64_t i, std::vector<int32_t>* ids, std::vector<int64_t>* labels) const;

 private:
  const std::vector<TokenChunk>& chunks_;
  MaskedLmOptions o_;
};

}  // namespace ct::tasks

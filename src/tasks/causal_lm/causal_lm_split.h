// Causal language modelling (run_clm) as a task of the Trainer (train/task_split.h): blocks of exactly
// block_size tokens from group_texts, labels = input_ids as run_clm sets them, handed to the model already
// shifted (token t's target is token t + 1 of its block; the block's last token has none), so the Trainer's
// count of labelled tokens is HF's num_items_in_batch after the shift (transformers#46204). Blocks are never
// padded; they are collated as packed rows of block_size each. A feature's prediction row is the argmax at
// each position (-1 at the last), what run_clm's preprocess_logits_for_metrics keeps; scoring is its
// compute_metrics: accuracy of predictions[:, :-1] against labels[:, 1:] over every block.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/task_split.h"

namespace ct::tasks {

class CausalLmSplit : public train::TaskSplit {
 public:
  // The split keeps a reference to `blocks` (each of block_size tokens).
  CausalLmSplit(const std::vector<std::vector<int32_t>>& blocks, int64_t block_size);

  int64_t num_examples() const override { return static_cast<int64_t>(blocks_.size()); }
  int64_t num_features() const override { return static_cast<int64_t>(blocks_.size()); }
  int64_t feature_length(int64_t /*i*/) const override { return block_size_; }
  int64_t max_seq_length() const override { return block_size_; }
  bool packed() const override { return true; }
  train::CollatedBatch collate(std::span<const int64_t> features, bool labels) const override;
  bool token_labels() const override { return true; }
  bool has_labels() const override { return true; }

  int64_t prediction_width() const override { return block_size_; }
  void prediction_rows(const train::CollatedBatch& batch, const std::vector<float>& logits,
                       float* rows) const override;
  // {accuracy}.
  nlohmann::json score(const std::vector<float>& rows, const std::string& split, bool write_files,
                       const std::string& output_dir) const override;

 private:
  const std::vector<std::vector<int32_t>>& blocks_;
  int64_t block_size_;
};

}  // namespace ct::tasks

// What the Trainer needs from a task, for one split of its data: features it can batch (lengths for the
// length-grouped sampler and the throughput count, collation into the model's inputs with or without labels),
// and, for evaluation, a fixed-width row of predictions per feature taken from the model's logits, plus how
// the gathered rows become metrics and prediction files. The Trainer owns everything else (sampling, data
// parallelism, the optimizer, checkpoints, logging), so a task is its features and these few functions.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/model.h"

namespace ct::train {

// A batch collated for the model: `batch` points into buffers that `storage` keeps alive.
struct CollatedBatch {
  model::Batch batch;
  std::vector<int64_t> real_lengths;  // real tokens of each row (model FLOPs, throughput)
  int64_t positions = 0;              // token positions the model computes: B x T padded, the tokens packed
  std::shared_ptr<const void> storage;
};

// Where a batch sits in the run, for tasks that draw their inputs per sample (run_mlm's dynamic masking): the
// epoch (kEvalEpoch for evaluation and prediction) and each feature's position in that epoch's order (in
// evaluation, its feature index). Keyed by these, a sample gets the same draws on any rank, world size or
// resume.
struct BatchKey {
  static constexpr uint64_t kEvalEpoch = ~uint64_t{0};
  uint64_t epoch = kEvalEpoch;
  std::span<const int64_t> positions;
};

class TaskSplit {
 public:
  virtual ~TaskSplit() = default;

  virtual int64_t num_examples() const = 0;
  virtual int64_t num_features() const = 0;
  // Real tokens of feature i.
  virtual int64_t feature_length(int64_t i) const = 0;
  // The longest a feature can be (--max_seq_length after the task's rules).
  virtual int64_t max_seq_length() const = 0;
  // Packed batches (tokens end to end, no pad rows), as --pad_to_max_length false runs them.
  virtual bool packed() const = 0;
  virtual CollatedBatch collate(std::span<const int64_t> features, bool labels) const = 0;
  // What the Trainer calls; tasks whose batches depend on where they sit override it.
  virtual CollatedBatch collate(std::span<const int64_t> features, bool labels,
                                const BatchKey& /*key*/) const {
    return collate(features, labels);
  }

  // Whether collate(..., labels=true) gives evaluation batches labels, so the eval loop reports eval_loss
  // (QA's eval features have none, as run_qa's).
  virtual bool has_labels() const { return false; }

  // Whether collated labels are per token (token classification, masked LM) rather than one per row.
  virtual bool token_labels() const { return false; }

  // Evaluation. Each feature's predictions are prediction_width() floats; prediction_rows writes a collated
  // batch's rows (batch order) from the logits of its forward (Model::logits()).
  virtual int64_t prediction_width() const = 0;
  virtual void prediction_rows(const CollatedBatch& batch, const std::vector<float>& logits,
                               float* rows) const = 0;
  // Metrics from every feature's row ([num_features, prediction_width], feature order), without a prefix, as
  // the script's compute_metrics names them; `split` ("eval", "predict") names the prediction files, which
  // are written into `output_dir` only when `write_files`.
  virtual nlohmann::json score(const std::vector<float>& rows, const std::string& split, bool write_files,
                               const std::string& output_dir) const = 0;
};

}  // namespace ct::train

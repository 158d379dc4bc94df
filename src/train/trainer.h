// The HF Trainer loop for extractive QA, one process's part of it: sampler(rank, world, seed, epoch) ->
// micro-batches -> forward/backward (gradient accumulation) -> clip -> AdamW/SGD -> LR schedule -> log / eval
// / save on their steps; evaluation -> post-processing -> SQuAD metrics; checkpoints that resume bit-exactly
// (weights, optimizer moments, schedule position, data order, dropout counter).
//
// Data parallelism (DistContext with a communicator): every rank holds the whole model; the sampler gives
// rank r its share of each global batch, dropout is keyed by each feature's position in the epoch, a
// DdpReducer averages gradients in buckets overlapped with the last backward of each step, the logged loss is
// the mean over ranks, evaluation is sharded by batch and gathered, only world process zero writes files, and
// a checkpoint (read by rank 0, broadcast to the rest) resumes at any world size.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/features.h"
#include "data/postprocess.h"
#include "data/squad.h"
#include "model/qa_model.h"
#include "text/tokenizer.h"
#include "train/ddp_reducer.h"
#include "train/dist_context.h"
#include "train/lr_schedule.h"
#include "train/trainer_state.h"
#include "train/training_args.h"

namespace ct::train {

struct QaDataset {
  std::vector<data::Example> examples;
  data::FeatureSet features;
};

// Model inputs of every eval feature as the eval loop fed them, plus each token's context byte span, for
// checking logits against another implementation (--dump_eval_features).
void dump_eval_features(const std::string& path, const QaDataset& eval, int64_t eval_batch_size);

class Trainer {
 public:
  Trainer(const QaArguments& args, model::QaModel& model, const text::Tokenizer& tokenizer,
          DistContext dist = {});
  ~Trainer();

  // Trains on `train` (features must outlive the call), resuming from `resume_from` (a checkpoint folder)
  // when not empty; `eval` (may be null) serves eval_strategy steps/epoch. Returns HF's train metrics
  // (train_loss, train_runtime, train_samples_per_second, train_steps_per_second, total_flos, epoch).
  nlohmann::json train(const QaDataset& train, const QaDataset* eval, const std::string& resume_from);

  // Runs the model over every eval feature, post-processes and scores: {eval_exact_match, eval_f1 (v2:
  // eval_exact, eval_f1, eval_HasAns_*...), eval_runtime, eval_samples_per_second, eval_steps_per_second,
  // epoch}, appended to log_history. Writes eval_predictions.json / eval_nbest_predictions.json to output_dir
  // when `write_predictions`.
  nlohmann::json evaluate(const QaDataset& eval, bool write_predictions);

  // Raw logits of every feature, [features, seq_len] with seq_len = the longest row (shorter rows padded with
  // -100 as HF's eval loop pads).
  void predict_logits(const QaDataset& eval, std::vector<float>* start, std::vector<float>* end,
                      int64_t* seq_len);

  // config.json, model.safetensors, tokenizer files, training_args.json into `dir` (HF save_model).
  void save_model(const std::string& dir) const;
  // trainer_state.json into output_dir (HF save_state).
  void save_state() const;
  // {prefix}_results.json and merged all_results.json in output_dir (HF save_metrics(combined=True)).
  void save_metrics(const std::string& prefix, const nlohmann::json& metrics) const;

  const TrainerState& state() const { return state_; }
  // Seconds of gradient communication not hidden behind backward, summed over training steps (0 alone).
  double comm_exposed_seconds() const { return reducer_ ? reducer_->exposed_seconds() : 0.0; }
  bool writes_files() const { return is_world_process_zero(dist_); }

 private:
  void save_checkpoint(const LrSchedule& schedule);
  void load_checkpoint(const std::string& dir, const LrSchedule& schedule);
  void optimizer_step(double lr);
  void log(nlohmann::json entry);

  const QaArguments& args_;
  model::QaModel& model_;
  const text::Tokenizer& tokenizer_;
  DistContext dist_;
  std::unique_ptr<DdpReducer> reducer_;  // null with one process
  TrainerState state_;
  std::vector<float> exp_avg_, exp_avg_sq_;
  int64_t optimizer_steps_ = 0;
  int64_t epochs_done_ = 0;
  std::vector<std::string> pending_lines_;
};

}  // namespace ct::train

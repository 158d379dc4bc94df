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
//
// Stop signals (train/stop_signal.h): the training loop runs inside a GracefulStopScope; each step's loss
// all-reduce also carries whether a rank has seen SIGTERM/SIGINT, so all ranks stop after the same step, save
// a checkpoint there (unless that step just saved one) and throw StopRequested.
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

// A training plan's shape, for comparing a checkpoint's with this run's.
struct TrainPlan {
  int world = 1;
  int64_t per_device_batch = 1;
  int64_t accum = 1;
  int64_t max_steps = 0;
};

// The line rank 0 logs when a checkpoint written at `global_step` by `from.world` ranks is resumed with
// `to.world` ranks ("" when the world sizes agree): the global batch before and after, and what the
// step-based resume does to the epoch. The epoch's order is one permutation for every world size and a step
// covers positions [s*G, (s+1)*G) of it (G = per-device x world x accumulation), but the resume position is
// the checkpoint's step counted in the new plan (epoch = step / steps_per_epoch, skip step % steps_per_epoch
// steps, as HF does), so with another global batch some samples of the epoch are trained again or skipped,
// and the epoch's remaining steps and the run's end change; the line says which.
std::string describe_world_change(const std::string& checkpoint, int64_t global_step, const TrainPlan& from,
                                  const TrainPlan& to, int64_t num_samples, bool drop_last);

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
  // Called with every log_history entry as it is logged (run_qa: TensorBoard on rank 0).
  std::function<void(const nlohmann::json& entry)> on_log;
  // The last train()'s timing, every rank's gathered (ddp_timing.json, train/report.h has the layout).
  const nlohmann::json& timing() const { return timing_; }

 private:
  // full: the optimizer/scheduler/rng files even with --save_only_model (a stop checkpoint must resume).
  void save_checkpoint(const LrSchedule& schedule, bool full = false);
  // Returns the plan that wrote the checkpoint on rank 0 (world 0 when its rng_state files do not say).
  TrainPlan load_checkpoint(const std::string& dir, const LrSchedule& schedule);
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
  nlohmann::json timing_;
};

}  // namespace ct::train

// The HF Trainer loop, one process's part of it, for any task (train/task_split.h): sampler(rank, world,
// seed, epoch) -> micro-batches -> forward/backward (gradient accumulation) -> clip -> AdamW/SGD -> LR
// schedule -> log / eval / save on their steps; evaluation -> the task's prediction rows, gathered -> its
// metrics; checkpoints that resume bit-exactly (weights, optimizer moments, schedule position, data order,
// dropout counter).
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

#include "data/sampler.h"
#include "model/model.h"
#include "train/ddp_reducer.h"
#include "train/dist_context.h"
#include "train/lr_schedule.h"
#include "train/node_shard.h"
#include "train/task_split.h"
#include "train/trainer_state.h"
#include "train/training_args.h"

namespace ct::train {

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
  // `save_tokenizer` writes the tokenizer's files into a folder (the model's and every checkpoint's), as
  // HF's tokenizer.save_pretrained does.
  using SaveTokenizerFn = std::function<void(const std::string& dir)>;
  Trainer(const TrainingArguments& args, model::Model& model, SaveTokenizerFn save_tokenizer,
          DistContext dist = {});
  ~Trainer();

  // Trains on `train` (features must outlive the call), resuming from `resume_from` (a checkpoint folder)
  // when not empty; `eval` (may be null) serves eval_strategy steps/epoch. Returns HF's train metrics
  // (train_loss, train_runtime, train_samples_per_second, train_steps_per_second, total_flos, epoch).
  nlohmann::json train(const TaskSplit& train, const TaskSplit* eval, const std::string& resume_from);
  // This rank's micro-batches of training epoch `epoch` as train() forms them (the sampler's indices and
  // positions, the keys of dropout and of per-sample draws such as MLM masks).
  std::vector<data::SampledBatch> train_batches(const TaskSplit& train, int64_t epoch) const;

  // Runs the model over every eval feature and scores the gathered rows with the task: {eval_loss (when the
  // split has labels), eval_<metric>..., eval_runtime, eval_samples_per_second, eval_steps_per_second,
  // epoch}, appended to log_history; `prefix` replaces "eval" (HF's metric_key_prefix). The task writes its
  // prediction files (split `prefix`) to output_dir when `write_predictions`.
  nlohmann::json evaluate(const TaskSplit& eval, bool write_predictions, const std::string& prefix = "eval");
  // HF's trainer.predict: the same metrics under `prefix`, not logged, no epoch; the task writes its
  // prediction files.
  nlohmann::json predict(const TaskSplit& split, const std::string& prefix = "predict");

  // Every feature's prediction row ([features, split.prediction_width()], feature order), computed by the
  // single-process run's batches dealt round-robin to the ranks and gathered, so every rank holds rows
  // byte-identical to one process's. With `loss` and a split that has labels: HF's eval loss, the mean over
  // features of their batch's mean loss (each batch's loss travels with its rows, so it too is one
  // process's).
  std::vector<float> predict_rows(const TaskSplit& split, double* loss = nullptr);

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
  data::SamplerOptions sampler_options(const TaskSplit& train) const;
  // grad_scale: clipping's coefficient, applied by AdamW as it reads the gradients (1 for SGD).
  void optimizer_step(double lr, float grad_scale);
  nlohmann::json prediction_metrics(const TaskSplit& split, const std::string& prefix, bool write_files);
  void log(nlohmann::json entry);

  const TrainingArguments& args_;
  model::Model& model_;
  SaveTokenizerFn save_tokenizer_;
  DistContext dist_;
  std::unique_ptr<DdpReducer> reducer_;  // null with one process
  TrainerState state_;
  // HF's TrainerState.epoch is None until a training loop starts, and Trainer.log adds "epoch" only when it
  // is not None: an evaluate- or predict-only run's logs and eval_results.json have no "epoch" key.
  bool epoch_known_ = false;
  std::vector<float> exp_avg_, exp_avg_sq_;  // this rank's own moments, unless sharded_
  // The node's ranks share the weights and moments and each updates its slice (train/node_shard.h); set by
  // train() where the node's ranks share memory.
  NodeShard shard_;
  bool sharded_ = false;
  void allocate_node_state();  // collective over all ranks (they agree); sets sharded_
  void share_node_state();     // after loading: the weights and moments into the shared regions
  float* exp_avg_data() { return sharded_ ? shard_.exp_avg : exp_avg_.data(); }
  float* exp_avg_sq_data() { return sharded_ ? shard_.exp_avg_sq : exp_avg_sq_.data(); }
  // Word-embedding rows that ever had a gradient: AdamW updates those, the others get the weight decay alone
  // (kernels::adamw_step). Rebuilt from the moments on resume. Every row when sparse_word_grad_ is off.
  RowSet touched_rows_;
  // The word embeddings' untouched rows skipped by the norm, clipping and AdamW (exactly: the result is the
  // dense passes' to the bit); CORETRAIN_DENSE_WORD_GRAD=1 runs them dense, to compare.
  bool sparse_word_grad_ = true;
  int64_t optimizer_steps_ = 0;
  int64_t epochs_done_ = 0;
  std::vector<std::string> pending_lines_;
  nlohmann::json timing_;
};

}  // namespace ct::train

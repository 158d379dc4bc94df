// The part of every example script's main() that follows its data: the Trainer over the task's splits,
// --do_train (train, save_model, train metrics with train_samples, trainer_state.json), --do_eval and
// --do_predict (metrics printed as log_metrics prints them and saved as save_metrics saves them), the
// --bf16_full_eval cast before the first evaluation after training, TensorBoard on world process zero, and
// the model card at the end. Each script keeps only what differs: its splits, its eval loop over several
// sets (MNLI's mismatched one), its prediction files.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "model/model.h"
#include "train/dist_context.h"
#include "train/model_card.h"
#include "train/task_split.h"
#include "train/tensorboard.h"
#include "train/trainer.h"
#include "train/training_args.h"

namespace ct::train {

// What a command reports back to its shell (the demo prints from it).
struct RunResult {
  nlohmann::json train_metrics;  // empty unless --do_train
  nlohmann::json eval_metrics;   // empty unless --do_eval
  int world = 1;
  double comm_exposed_seconds = 0;  // gradient communication not hidden behind backward
};

class TaskRunner {
 public:
  // `t` and `model` must outlive the runner.
  TaskRunner(const TrainingArguments& t, model::Model& model, Trainer::SaveTokenizerFn save_tokenizer,
             const DistContext& dist);
  ~TaskRunner();

  Trainer& trainer() { return trainer_; }
  bool writer() const { return is_world_process_zero(dist_); }

  // --do_train: returns the train metrics (train_samples added), already printed and saved.
  nlohmann::json train(const TaskSplit& train, const TaskSplit* eval, const std::string& resume,
                       int64_t train_samples);
  // trainer.evaluate with `prefix`'s metrics and {prefix}_samples, not yet printed or saved (MNLI renames
  // the mismatched set's keys first).
  nlohmann::json evaluate(const TaskSplit& eval, int64_t samples, const std::string& prefix = "eval");
  // trainer.predict: {predict_<metric>, predict_runtime, ...}; the task writes its prediction files.
  nlohmann::json predict(const TaskSplit& split, const std::string& prefix = "predict");
  // What most scripts do after their data is ready: --do_train on `train` (train_samples), then --do_eval on
  // `eval` ("*** Evaluate ***", eval_samples; `amend` may add keys, as run_mlm's perplexity, before the
  // metrics are printed and saved). Returns the run's result.
  RunResult train_and_evaluate(const TaskSplit* train, int64_t train_samples, const TaskSplit* eval,
                               int64_t eval_samples, const std::string& resume,
                               const std::function<void(nlohmann::json&)>& amend = {});
  // log_metrics + save_metrics of `split`; after training, trainer_state.json again (the evaluations'
  // log entries).
  void report(const std::string& split, const nlohmann::json& printed, const nlohmann::json& saved);
  void report(const std::string& split, const nlohmann::json& m) { report(split, m, m); }
  // --dump_eval_features: the split's eval features to `path` (world process zero); fails without --do_eval.
  void dump_eval_features(const std::string& path, const TaskSplit* eval);
  // --dump_train_features: world process zero's micro-batches of the first epoch, as training collates them
  // (a step's features, for checking its gradient); fails without --do_train.
  void dump_train_features(const std::string& path, const TaskSplit* train);
  // README.md in output_dir (world process zero).
  void write_model_card(const ModelCardInfo& card);

  double comm_exposed_seconds() const { return trainer_.comm_exposed_seconds(); }

 private:
  void before_prediction();

  const TrainingArguments& t_;
  model::Model& model_;
  DistContext dist_;
  Trainer trainer_;
  std::unique_ptr<TensorBoardWriter> tb_;
  bool trained_ = false;
  bool cast_for_eval_ = false;
};

}  // namespace ct::train

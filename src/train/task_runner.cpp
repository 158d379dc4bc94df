#include "train/task_runner.h"

#include <algorithm>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "model/config.h"
#include "train/checkpoint.h"
#include "train/dump_features.h"
#include "train/report.h"
#include "train/run_setup.h"

namespace ct::train {

TaskRunner::TaskRunner(const TrainingArguments& t, model::Model& model,
                       Trainer::SaveTokenizerFn save_tokenizer, const DistContext& dist)
    : t_(t), model_(model), dist_(dist), trainer_(t, model, std::move(save_tokenizer), dist) {
  // --report_to tensorboard: HF's TensorBoardCallback, on world process zero only (train/tensorboard.h).
  const auto reports = report_integrations(t);
  if (writer() && std::find(reports.begin(), reports.end(), "tensorboard") != reports.end()) {
    tb_ = std::make_unique<TensorBoardWriter>(t.logging_dir);
    log::info("TensorBoard: ", tb_->path());
    trainer_.on_log = [this](const nlohmann::json& e) {
      tensorboard_log(*tb_, e, e.value("step", int64_t{0}));
    };
  }
}

TaskRunner::~TaskRunner() = default;

nlohmann::json TaskRunner::train(const TaskSplit& train, const TaskSplit* eval, const std::string& resume,
                                 int64_t train_samples) {
  if (tb_) {  // on_train_begin
    tb_->add_text("args", training_args_to_json(t_).dump(2));
    tb_->add_text("model_config", model_.config_json());
    tb_->flush();
  }
  auto m = trainer_.train(train, eval, resume);
  if (writer()) write_json(t_.output_dir + "/" + kTimingFile, trainer_.timing());
  trainer_.save_model(t_.output_dir);
  m["train_samples"] = train_samples;
  if (writer()) print_metrics("train", m);
  trainer_.save_metrics("train", m);
  trainer_.save_state();
  trained_ = true;
  return m;
}

void TaskRunner::before_prediction() {
  // HF's evaluation_loop casts the model to bf16 once training is over (not for evaluations during it) and
  // leaves it so. coretrain's bf16 keeps layer norm and softmax in f32 (autocast's split), where a model
  // cast whole to bf16 runs them in bf16 too.
  if (t_.bf16_full_eval && !cast_for_eval_) {
    model_.set_precision(model::resolve_precision(/*bf16_requested=*/true));
    cast_for_eval_ = true;
  }
}

nlohmann::json TaskRunner::evaluate(const TaskSplit& eval, int64_t samples, const std::string& prefix) {
  before_prediction();
  auto m = trainer_.evaluate(eval, /*write_predictions=*/true, prefix);
  m[prefix + "_samples"] = samples;
  return m;
}

nlohmann::json TaskRunner::predict(const TaskSplit& split, const std::string& prefix) {
  before_prediction();
  return trainer_.predict(split, prefix);
}

RunResult TaskRunner::train_and_evaluate(const TaskSplit* train, int64_t train_samples, const TaskSplit* eval,
                                         int64_t eval_samples, const std::string& resume,
                                         const std::function<void(nlohmann::json&)>& amend) {
  RunResult result;
  result.world = dist_.world;
  if (t_.do_train) {
    if (!train) fail("--do_train requires a train dataset");
    result.train_metrics = this->train(*train, t_.do_eval ? eval : nullptr, resume, train_samples);
    result.comm_exposed_seconds = comm_exposed_seconds();
  }
  if (t_.do_eval) {
    if (!eval) fail("--do_eval requires a validation dataset");
    log::info("*** Evaluate ***");
    result.eval_metrics = evaluate(*eval, eval_samples);
    if (amend) amend(result.eval_metrics);
    report("eval", result.eval_metrics);
  }
  return result;
}

void TaskRunner::report(const std::string& split, const nlohmann::json& printed,
                        const nlohmann::json& saved) {
  if (writer()) print_metrics(split, printed);
  trainer_.save_metrics(split, saved);
  if (trained_ && split == "eval") trainer_.save_state();
}

void TaskRunner::dump_eval_features(const std::string& path, const TaskSplit* eval) {
  if (path.empty()) return;
  if (!eval) fail("--dump_eval_features: needs --do_eval");
  if (writer()) train::dump_eval_features(path, *eval, t_.per_device_eval_batch_size);
}

void TaskRunner::dump_train_features(const std::string& path, const TaskSplit* train) {
  if (path.empty()) return;
  if (!train) fail("--dump_train_features: needs --do_train");
  if (writer()) train::dump_train_features(path, *train, trainer_.train_batches(*train, 0), 0);
}

void TaskRunner::write_model_card(const ModelCardInfo& card) {
  if (!writer()) return;
  fs::write_file_atomic(t_.output_dir + "/README.md",
                        model_card(card, t_, trainer_.state().log_history, dist_.world));
  if (trained_) log::info("training report: ", write_training_report(t_.output_dir));
}

}  // namespace ct::train

#include "train/trainer_state.h"

#include "core/error.h"

namespace ct::train {

nlohmann::json TrainerState::to_json(bool is_world_process_zero, bool is_local_process_zero) const {
  nlohmann::json j;  // nlohmann's object keeps keys sorted, as HF's json.dumps(sort_keys=True)
  j["best_global_step"] = best_global_step ? nlohmann::json(*best_global_step) : nlohmann::json();
  j["best_metric"] = best_metric ? nlohmann::json(*best_metric) : nlohmann::json();
  j["best_model_checkpoint"] =
      best_model_checkpoint.empty() ? nlohmann::json() : nlohmann::json(best_model_checkpoint);
  j["epoch"] = epoch;
  j["eval_steps"] = eval_steps;
  j["global_step"] = global_step;
  j["is_hyper_param_search"] = false;
  j["is_local_process_zero"] = is_local_process_zero;
  j["is_world_process_zero"] = is_world_process_zero;
  j["log_history"] = log_history;
  j["logging_steps"] = logging_steps;
  j["max_steps"] = max_steps;
  j["num_input_tokens_seen"] = num_input_tokens_seen;
  j["num_train_epochs"] = num_train_epochs;
  j["save_steps"] = save_steps;
  j["stateful_callbacks"] = nlohmann::json::object();
  j["total_flos"] = total_flos;
  j["train_batch_size"] = train_batch_size;
  j["trial_name"] = nullptr;
  j["trial_params"] = nullptr;
  return j;
}

TrainerState TrainerState::from_json(const nlohmann::json& j, const std::string& source) {
  TrainerState s;
  try {
    s.global_step = j.at("global_step").get<int64_t>();
    s.epoch = j.at("epoch").get<double>();
    s.max_steps = j.value("max_steps", int64_t{0});
    s.num_train_epochs = j.value("num_train_epochs", int64_t{0});
    s.logging_steps = j.value("logging_steps", int64_t{500});
    s.eval_steps = j.value("eval_steps", int64_t{500});
    s.save_steps = j.value("save_steps", int64_t{500});
    s.train_batch_size = j.value("train_batch_size", int64_t{8});
    s.total_flos = j.value("total_flos", 0.0);
    s.num_input_tokens_seen = j.value("num_input_tokens_seen", int64_t{0});
    if (j.contains("best_metric") && !j["best_metric"].is_null())
      s.best_metric = j["best_metric"].get<double>();
    if (j.contains("best_global_step") && !j["best_global_step"].is_null())
      s.best_global_step = j["best_global_step"].get<int64_t>();
    if (j.contains("best_model_checkpoint") && !j["best_model_checkpoint"].is_null())
      s.best_model_checkpoint = j["best_model_checkpoint"].get<std::string>();
    s.log_history = j.value("log_history", nlohmann::json::array());
  } catch (const nlohmann::json::exception& e) {
    fail(source, ": bad trainer state (", e.what(), ")");
  }
  if (s.global_step < 0) fail(source, ": global_step is negative");
  return s;
}

}  // namespace ct::train

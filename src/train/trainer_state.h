// TrainerState: the Trainer's bookkeeping that HF writes as trainer_state.json (same keys), saved in every
// checkpoint and in output_dir, and read back on resume.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ct::train {

struct TrainerState {
  int64_t global_step = 0;
  double epoch = 0;
  int64_t max_steps = 0;
  int64_t num_train_epochs = 0;
  int64_t logging_steps = 500;
  int64_t eval_steps = 500;
  int64_t save_steps = 500;
  int64_t train_batch_size = 8;
  double total_flos = 0;
  int64_t num_input_tokens_seen = 0;
  std::optional<double> best_metric;
  std::optional<int64_t> best_global_step;
  std::string best_model_checkpoint;
  nlohmann::json log_history = nlohmann::json::array();

  nlohmann::json to_json(bool is_world_process_zero, bool is_local_process_zero) const;
  // Throws naming `source` on a missing or mistyped key.
  static TrainerState from_json(const nlohmann::json& j, const std::string& source);
};

}  // namespace ct::train

// The flags every example-script command shares: ModelArguments' common fields and the HF TrainingArguments
// that matter, by their HF names and defaults, for a command's ArgParser (train/arg_parser.h:
// HfArgumentParser's conventions). Each task's own DataTrainingArguments live with the task
// (src/tasks/<task>/*_args.h). Every rejected value throws ct::Error naming the flag.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/arg_parser.h"

namespace ct::train {

struct ModelArguments {
  std::string model_name_or_path;
  std::string config_name;
  std::string tokenizer_name;
  std::string cache_dir;
  std::string model_revision = "main";
  std::string token;
  bool trust_remote_code = false;
};

struct TrainingArguments {
  std::string output_dir;
  bool overwrite_output_dir = false;
  bool do_train = false;
  bool do_eval = false;
  bool do_predict = false;
  std::string eval_strategy = "no";  // no | steps | epoch
  int64_t per_device_train_batch_size = 8;
  int64_t per_device_eval_batch_size = 8;
  int64_t gradient_accumulation_steps = 1;
  double learning_rate = 5e-5;
  double weight_decay = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_epsilon = 1e-8;
  double max_grad_norm = 1.0;
  double num_train_epochs = 3.0;
  int64_t max_steps = -1;
  std::string lr_scheduler_type = "linear";
  double warmup_ratio = 0.0;
  int64_t warmup_steps = 0;
  std::string log_level = "passive";
  std::string logging_dir;
  std::string logging_strategy = "steps";  // no | steps | epoch
  bool logging_first_step = false;
  double logging_steps = 500;  // < 1: ratio of total steps
  bool logging_nan_inf_filter = true;
  std::string save_strategy = "steps";  // no | steps | epoch
  double save_steps = 500;
  int64_t save_total_limit = -1;  // None
  bool save_only_model = false;
  bool save_safetensors = true;
  bool use_cpu = false;
  int64_t seed = 42;
  int64_t data_seed = -1;  // None: follows seed
  bool full_determinism = false;
  bool bf16 = false;
  bool bf16_full_eval = false;
  double eval_steps = -1;  // None: follows logging_steps
  bool dataloader_drop_last = false;
  int64_t dataloader_num_workers = 0;
  bool group_by_length = false;  // train batches of similar feature lengths (data/sampler.h)
  // HF reads lengths from this dataset column when there is one; run_qa's features have none.
  std::string length_column_name = "length";
  std::string run_name;
  bool disable_tqdm = false;
  bool load_best_model_at_end = false;
  std::string metric_for_best_model;
  bool ignore_data_skip = false;
  std::string resume_from_checkpoint;
  std::string optim = "adamw_torch";  // adamw_torch | adamw_hf | adamw_torch_fused | sgd
  std::string report_to = "none";
  std::string ddp_backend;  // "" | ccl | mpi | gloo
  int64_t ddp_timeout = 1800;
  double ddp_bucket_cap_mb = 25.0;
  bool ddp_find_unused_parameters = false;
  bool ddp_broadcast_buffers = false;
  bool use_ipex = false;
  int64_t local_rank = -1;
  bool push_to_hub = false;

  // The step counts after ratios (< 1) are resolved against the run's total optimizer steps.
  int64_t resolved_logging_steps(int64_t max_steps) const;
  int64_t resolved_save_steps(int64_t max_steps) const;
  int64_t resolved_eval_steps(int64_t max_steps) const;
  int64_t resolved_data_seed() const { return data_seed >= 0 ? data_seed : seed; }
};

// The flags every command shares, for a command's own ArgParser (train/arg_parser.h): ModelArguments'
// common fields and the whole of TrainingArguments, by HF's names with HF's defaults.
void add_model_args(ArgParser& parser, ModelArguments& model);
void add_training_args(ArgParser& parser, TrainingArguments& training);
// TrainingArguments' range checks and HF's __post_init__ (eval_strategy implies do_eval); notes about flags
// accepted for compatibility go to `notes`.
void validate_training_args(TrainingArguments& training, std::vector<std::string>* notes);

// The TrainingArguments as HF's to_json_string writes them (training_args.json).
nlohmann::json training_args_to_json(const TrainingArguments& args);
// --report_to resolved as HF's __post_init__ does: "none" -> [], "all" -> every integration there is (here
// only "tensorboard"), else the comma-separated names (validate_training_args rejects the others).
std::vector<std::string> report_integrations(const TrainingArguments& args);
}  // namespace ct::train

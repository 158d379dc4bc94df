// The command line of `coretrain qa`: run_qa.py's ModelArguments and DataTrainingArguments plus the HF
// TrainingArguments that matter, by their HF names and defaults, parsed the way HfArgumentParser parses them
// (`--flag value`, `--flag=value`, bare bools or `--flag true|false`, `--no_<flag>` for bools that default to
// true, a single `.json` argument as the whole set). Every rejected value throws ct::Error naming the flag.
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

struct DataTrainingArguments {
  std::string dataset_name;
  std::string dataset_config_name;
  std::string train_file;
  std::string validation_file;
  std::string test_file;
  bool overwrite_cache = false;
  int64_t preprocessing_num_workers = -1;  // None
  int64_t max_seq_length = 384;
  bool pad_to_max_length = true;
  int64_t max_train_samples = -1;  // None
  int64_t max_eval_samples = -1;
  int64_t max_predict_samples = -1;
  bool version_2_with_negative = false;
  double null_score_diff_threshold = 0.0;
  int64_t doc_stride = 128;
  int64_t n_best_size = 20;
  int64_t max_answer_length = 30;
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

// coretrain's own flags (not in HF): the built-in demo and debugging aids.
struct CoretrainArguments {
  bool demo = false;                  // generate the demo set, train a small BERT from random init, evaluate
  int64_t demo_train_paragraphs = 0;  // 0: the demo's default
  int64_t demo_eval_paragraphs = 0;
  int64_t demo_min_people = 0;  // people per demo paragraph (0: the demo's default)
  int64_t demo_max_people = 0;
  bool demo_global_batch = false;  // set by the parser: the demo's batch size is split over the ranks
  std::string
      dump_eval_features;  // write the eval features' model inputs to this JSON file (tests feed torch)
};

struct QaArguments {
  ModelArguments model;
  DataTrainingArguments data;
  TrainingArguments training;
  CoretrainArguments coretrain;
  std::vector<std::string>
      notes;  // one line each about compatibility flags that were accepted but change nothing
  bool help = false;
};

// The flags every command shares, for a command's own ArgParser (train/arg_parser.h): ModelArguments'
// common fields and the whole of TrainingArguments, by HF's names with HF's defaults.
void add_model_args(ArgParser& parser, ModelArguments& model);
void add_training_args(ArgParser& parser, TrainingArguments& training);
// TrainingArguments' range checks and HF's __post_init__ (eval_strategy implies do_eval); notes about flags
// accepted for compatibility go to `notes`.
void validate_training_args(TrainingArguments& training, std::vector<std::string>* notes);

// argv excludes the program name. A single argument ending in ".json" is read as the whole argument set.
QaArguments parse_qa_args(const std::vector<std::string>& argv);
// Every flag with its default and a one-line description, for --help.
std::string qa_args_help();
// The TrainingArguments as HF's to_json_string writes them (training_args.json).
nlohmann::json training_args_to_json(const TrainingArguments& args);
// --report_to resolved as HF's __post_init__ does: "none" -> [], "all" -> every integration there is (here
// only "tensorboard"), else the comma-separated names (validated by parse_qa_args).
std::vector<std::string> report_integrations(const TrainingArguments& args);
// Everything, for the record next to a run (all three groups merged).
nlohmann::json qa_args_to_json(const QaArguments& args);

}  // namespace ct::train

// run_glue.py's DataTrainingArguments and ModelArguments extras, with its defaults and __post_init__ checks.
#pragma once

#include <string>
#include <vector>

#include "tasks/script_args.h"

namespace ct::tasks {

struct GlueDataArguments {
  std::string task_name;  // cola ... wnli, lower-cased; empty: local files or --dataset_name
  std::string dataset_name, dataset_config_name;
  int64_t max_seq_length = 128;
  bool overwrite_cache = false;
  bool pad_to_max_length = true;
  int64_t max_train_samples = -1, max_eval_samples = -1, max_predict_samples = -1;  // -1: None
  std::string train_file, validation_file, test_file;
};
using GlueArguments = ScriptArguments<GlueDataArguments>;

GlueArguments parse_glue_args(const std::vector<std::string>& argv);
std::string glue_args_help();

}  // namespace ct::tasks

// run_mlm.py's DataTrainingArguments and ModelArguments extras, with its defaults and __post_init__ checks.
#pragma once

#include <string>
#include <vector>

#include "tasks/script_args.h"

namespace ct::tasks {

struct MlmDataArguments {
  std::string dataset_name, dataset_config_name;
  std::string train_file, validation_file;
  bool overwrite_cache = false;
  int64_t validation_split_percentage = 5;  // of train, when there is no validation split
  int64_t max_seq_length = -1;              // None: the tokenizer's model_max_length, capped at 1,024
  int64_t preprocessing_num_workers = -1;
  double mlm_probability = 0.15;
  bool line_by_line = false;
  bool pad_to_max_length = false;
  int64_t max_train_samples = -1, max_eval_samples = -1;
  bool streaming = false;
};
using MlmArguments = ScriptArguments<MlmDataArguments>;

MlmArguments parse_mlm_args(const std::vector<std::string>& argv);
std::string mlm_args_help();

}  // namespace ct::tasks

// run_swag.py's DataTrainingArguments and ModelArguments extras, with its defaults and __post_init__ checks.
#pragma once

#include <string>
#include <vector>

#include "tasks/script_args.h"

namespace ct::tasks {

struct SwagDataArguments {
  std::string train_file, validation_file;  // empty: the Hub's swag, configuration "regular"
  bool overwrite_cache = false;
  int64_t preprocessing_num_workers = -1;
  int64_t max_seq_length = -1;  // None: the tokenizer's model_max_length
  bool pad_to_max_length = false;
  int64_t max_train_samples = -1, max_eval_samples = -1;
};
using SwagArguments = ScriptArguments<SwagDataArguments>;

SwagArguments parse_swag_args(const std::vector<std::string>& argv);
std::string swag_args_help();

}  // namespace ct::tasks

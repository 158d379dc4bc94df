// run_clm.py's DataTrainingArguments and ModelArguments extras (--model_type, --config_overrides, --dtype),
// with its defaults and __post_init__ checks, and the options this version of the decoder body refuses in one
// line instead of training something else (--dtype bfloat16, --bf16, --streaming).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tasks/script_args.h"

namespace ct::tasks {

struct ClmDataArguments {
  std::string dataset_name, dataset_config_name;
  std::string train_file, validation_file;
  int64_t max_train_samples = -1, max_eval_samples = -1;  // blocks, after grouping
  bool streaming = false;
  int64_t block_size = -1;  // None: the tokenizer's model_max_length, within the model's positions
  bool overwrite_cache = false;
  int64_t validation_split_percentage = 5;  // of train, when there is no validation split
  int64_t preprocessing_num_workers = -1;
  bool keep_linebreaks = true;  // txt files
  // TrainingArguments' flag, refused here: the decoder body does not recompute layers yet.
  bool gradient_checkpointing = false;
};
using ClmArguments = ScriptArguments<ClmDataArguments>;

ClmArguments parse_clm_args(const std::vector<std::string>& argv);
std::string clm_args_help();

}  // namespace ct::tasks

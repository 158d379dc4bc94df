// run_ner.py's DataTrainingArguments and ModelArguments extras, with its defaults and __post_init__ checks.
#pragma once

#include <string>
#include <vector>

#include "tasks/script_args.h"

namespace ct::tasks {

struct NerDataArguments {
  std::string task_name = "ner";  // ner | pos | chunk: the label column is {task_name}_tags
  std::string dataset_name, dataset_config_name;
  std::string train_file, validation_file, test_file;
  std::string text_column_name,
      label_column_name;  // empty: "tokens" (else the first column), and the rule above
  bool overwrite_cache = false;
  int64_t preprocessing_num_workers = -1;
  int64_t max_seq_length = -1;  // None: the tokenizer's model_max_length
  bool pad_to_max_length = false;
  int64_t max_train_samples = -1, max_eval_samples = -1, max_predict_samples = -1;
  bool label_all_tokens = false;
  bool return_entity_level_metrics = false;
};
using NerArguments = ScriptArguments<NerDataArguments>;

NerArguments parse_ner_args(const std::vector<std::string>& argv);
std::string ner_args_help();

}  // namespace ct::tasks

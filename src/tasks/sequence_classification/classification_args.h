// run_classification.py's DataTrainingArguments and ModelArguments extras, with its defaults and
// __post_init__ checks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tasks/script_args.h"

namespace ct::tasks {

struct ClassificationDataArguments {
  std::string dataset_name, dataset_config_name;
  std::optional<bool> do_regression;  // None: decided from the label column's type
  std::string text_column_names;      // comma-separated; empty: "sentence"
  std::string text_column_delimiter = " ";
  std::string train_split_name, validation_split_name, test_split_name;
  std::string remove_splits, remove_columns;  // comma-separated
  std::string label_column_name;              // empty: "label"
  int64_t max_seq_length = 128;
  bool overwrite_cache = false;
  bool pad_to_max_length = true;
  bool shuffle_train_dataset = false;
  int64_t shuffle_seed = 42;
  int64_t max_train_samples = -1, max_eval_samples = -1, max_predict_samples = -1;
  std::string metric_name;  // empty: accuracy, f1 (multi-label) or mse (regression)
  std::string train_file, validation_file, test_file;
};
using ClassificationArguments = ScriptArguments<ClassificationDataArguments>;

ClassificationArguments parse_classification_args(const std::vector<std::string>& argv);
std::string classification_args_help();

// A comma-separated flag as the script splits it (str.split(",")), or {} when empty.
std::vector<std::string> split_commas(const std::string& s);

}  // namespace ct::tasks

// The command line of `coretrain qa`: run_qa.py's ModelArguments and DataTrainingArguments plus the HF
// TrainingArguments that matter (train/training_args.h), by their HF names and defaults, and coretrain's own
// flags for qa (the built-in demo, --dump_eval_features), parsed the way HfArgumentParser parses them
// (`--flag value`, `--flag=value`, bare bools or `--flag true|false`, `--no_<flag>` for bools that default to
// true, a single `.json` argument as the whole set). Every rejected value throws ct::Error naming the flag.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/training_args.h"

namespace ct::tasks {

// run_qa.py's DataTrainingArguments.
struct QaDataArguments {
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

// coretrain's own flags of qa (not in HF): the built-in demo and debugging aids.
struct QaCoretrainArguments {
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
  train::ModelArguments model;
  QaDataArguments data;
  train::TrainingArguments training;
  QaCoretrainArguments coretrain;
  std::vector<std::string>
      notes;  // one line each about compatibility flags that were accepted but change nothing
  bool help = false;
};

// argv excludes the program name. A single argument ending in ".json" is read as the whole argument set.
QaArguments parse_qa_args(const std::vector<std::string>& argv);
// Every flag with its default and a one-line description, for --help.
std::string qa_args_help();
// Everything, for the record next to a run (all three groups merged).
nlohmann::json qa_args_to_json(const QaArguments& args);

}  // namespace ct::tasks

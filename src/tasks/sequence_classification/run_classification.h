// run_classification.py's main(), in one call: the data (a Hub dataset, or local csv/json files) with the
// script's split and column surgery (--remove_splits, --*_split_name, --remove_columns, --label_column_name)
// -> the text (--text_column_names joined by --text_column_delimiter, else "sentence") -> labels: a
// regression (float labels or --do_regression), multi-label (list labels: multi-hot targets, BCE, logits > 0)
// or single-label, the label list the union of the splits' labels as strings, sorted -> config, tokenizer
// and model -> features -> the Trainer's train / evaluate / predict (predict_results.txt) with accuracy,
// micro F1, mse or --metric_name -> the output folder HF writes.
#pragma once

#include <string>
#include <vector>

#include "tasks/sequence_classification/classification_args.h"
#include "train/dist_context.h"
#include "train/task_runner.h"

namespace ct::tasks {

// `argv`: the command line as given (every rank must have the same). Collective: every rank calls it.
train::RunResult run_classification(ClassificationArguments args, const std::vector<std::string>& argv,
                                    const train::DistContext& dist = {});

}  // namespace ct::tasks

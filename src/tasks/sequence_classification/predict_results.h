// The text of the prediction files run_glue.py and run_classification.py write with --do_predict: a header
// "index\tprediction", then one line per test example: the label name of the argmax, the value as Python's
// f"{x:3.3f}" for a regression, or (run_classification, multi-label) the Python repr of the list of label
// names whose cell is 1. File names: predict_results_{task}.txt (run_glue; "None" without --task_name,
// "mnli-mm" for mnli's mismatched test set) and predict_results.txt (run_classification).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ct::tasks {

std::string predict_results_classes(std::span<const int64_t> predicted_ids,
                                    const std::vector<std::string>& label_list);
std::string predict_results_regression(std::span<const float> predictions);
// `cells` holds one row of label_list.size() 0/1 values per example.
std::string predict_results_multilabel(std::span<const int64_t> cells,
                                       const std::vector<std::string>& label_list);

// run_glue's file name for a task ("" for local files).
std::string glue_predict_file_name(std::string_view task);

// Python's repr() of a str: single quotes unless the text has a single quote and no double quote, backslash
// escapes for the quote, backslash, \t \n \r and other control characters; other characters as they are.
std::string python_str_repr(std::string_view s);

}  // namespace ct::tasks

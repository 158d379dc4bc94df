// What run_glue.py reports from its predictions: evaluate's "glue" metric for a GLUE task name (cola:
// Matthews correlation; stsb: Pearson and Spearman; mrpc, qqp: accuracy and F1; the others: accuracy), or,
// for local files without a task name, evaluate's "accuracy" (or "mse" for a regression), then
// `combined_score`, the mean of the values, whenever there is more than one.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "tasks/metrics/metric.h"

namespace ct::tasks {

// The GLUE task names run_glue accepts (task_to_keys): cola, mnli, mrpc, qnli, qqp, rte, sst2, stsb, wnli.
bool is_glue_task(std::string_view task);
// "cola, mnli, ..., wnli", for messages and --help.
std::string glue_task_list();

// Argmax predictions of a classification task; `task` empty for local files. Fails for stsb (a regression)
// and for an unknown task name, naming it.
Metrics glue_classification_metrics(std::string_view task, std::span<const int64_t> predictions,
                                    std::span<const int64_t> references);

// Squeezed predictions of a regression: stsb, or local files with float labels (`task` empty).
Metrics glue_regression_metrics(std::string_view task, std::span<const float> predictions,
                                std::span<const float> references);

// Appends {"combined_score": mean of the values} when there are two or more (run_glue / run_classification).
void add_combined_score(Metrics& m);

}  // namespace ct::tasks

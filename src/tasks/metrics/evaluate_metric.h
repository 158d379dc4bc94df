// run_classification's --metric_name: the `evaluate` metric of that name, as compute() returns it for the
// script's predictions (argmax ids, multi-hot cells for multi-label with average="micro", or the squeezed
// regression values). The ones a classification run can use are computed here; any other name is refused
// up front naming the ones there are, rather than training first and failing at the first evaluation.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "tasks/metrics/glue_metric.h"

namespace ct::tasks {

// Fails naming --metric_name unless it is one evaluate_metric() computes for this kind of labels.
void check_metric_name(std::string_view name, bool regression, bool multi_label);

// Single-label: accuracy, f1 / precision / recall (average="binary", positive label 1), matthews_correlation.
Metrics evaluate_classification_metric(std::string_view name, std::span<const int64_t> predictions,
                                       std::span<const int64_t> references);
// Multi-label (config "multilabel", average="micro"): f1; accuracy is the exact-match ratio of rows.
Metrics evaluate_multilabel_metric(std::string_view name, std::span<const int64_t> prediction_cells,
                                   std::span<const int64_t> reference_cells, int64_t num_labels);
// Regression: mse, pearsonr, spearmanr.
Metrics evaluate_regression_metric(std::string_view name, std::span<const float> predictions,
                                   std::span<const float> references);

}  // namespace ct::tasks

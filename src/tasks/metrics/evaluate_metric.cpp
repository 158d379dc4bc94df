#include "tasks/metrics/evaluate_metric.h"

#include <set>
#include <vector>

#include "core/error.h"
#include "tasks/metrics/classification_metrics.h"

namespace ct::tasks {
namespace {

const char* kClassification = "accuracy, f1, precision, recall, matthews_correlation";
const char* kMultiLabel = "f1, accuracy";
const char* kRegression = "mse, pearsonr, spearmanr";

// sklearn's binary precision or recall (pos_label 1, zero_division -> 0).
double binary_ratio(std::span<const int64_t> p, std::span<const int64_t> r, bool precision) {
  CT_CHECK(p.size() == r.size(), "metric: ", p.size(), " predictions for ", r.size(), " references");
  std::set<int64_t> present(p.begin(), p.end());
  present.insert(r.begin(), r.end());
  CT_CHECK(present.size() <= 2 && (present.size() < 2 || present.count(1)),
           precision ? "precision" : "recall", ": expected a binary task (labels 0 and 1)");
  int64_t tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    tp += p[i] == 1 && r[i] == 1;
    fp += p[i] == 1 && r[i] != 1;
    fn += p[i] != 1 && r[i] == 1;
  }
  const int64_t d = precision ? tp + fp : tp + fn;
  return d == 0 ? 0.0 : static_cast<double>(tp) / static_cast<double>(d);
}

}  // namespace

void check_metric_name(std::string_view name, bool regression, bool multi_label) {
  const std::string n(name);
  if (regression) {
    CT_CHECK(n == "mse" || n == "pearsonr" || n == "spearmanr", "--metric_name ", n,
             ": not a metric coretrain computes for a regression (", kRegression, ")");
  } else if (multi_label) {
    CT_CHECK(n == "f1" || n == "accuracy", "--metric_name ", n,
             ": not a metric coretrain computes for multi-label classification (", kMultiLabel, ")");
  } else {
    CT_CHECK(n == "accuracy" || n == "f1" || n == "precision" || n == "recall" || n == "matthews_correlation",
             "--metric_name ", n, ": not a metric coretrain computes for classification (", kClassification,
             ")");
  }
}

Metrics evaluate_classification_metric(std::string_view name, std::span<const int64_t> predictions,
                                       std::span<const int64_t> references) {
  check_metric_name(name, false, false);
  const std::string n(name);
  if (n == "accuracy") return {{"accuracy", accuracy(predictions, references)}};
  if (n == "f1") return {{"f1", f1_binary(predictions, references)}};
  if (n == "matthews_correlation")
    return {{"matthews_correlation", matthews_corrcoef(predictions, references)}};
  return {{n, binary_ratio(predictions, references, n == "precision")}};
}

Metrics evaluate_multilabel_metric(std::string_view name, std::span<const int64_t> prediction_cells,
                                   std::span<const int64_t> reference_cells, int64_t num_labels) {
  check_metric_name(name, false, true);
  if (name == "f1") return {{"f1", f1_micro_multilabel(prediction_cells, reference_cells)}};
  CT_CHECK(num_labels > 0 && prediction_cells.size() == reference_cells.size() &&
               prediction_cells.size() % static_cast<size_t>(num_labels) == 0,
           "accuracy (multilabel): ", prediction_cells.size(), " cells for rows of ", num_labels);
  const size_t rows = prediction_cells.size() / static_cast<size_t>(num_labels);
  int64_t equal = 0;
  for (size_t r = 0; r < rows; ++r) {
    bool same = true;
    for (int64_t k = 0; k < num_labels; ++k) {
      const size_t i = r * static_cast<size_t>(num_labels) + static_cast<size_t>(k);
      same = same && prediction_cells[i] == reference_cells[i];
    }
    equal += same;
  }
  return {{"accuracy", rows ? static_cast<double>(equal) / static_cast<double>(rows) : 0.0}};
}

Metrics evaluate_regression_metric(std::string_view name, std::span<const float> predictions,
                                   std::span<const float> references) {
  check_metric_name(name, true, false);
  if (name == "mse") return {{"mse", mean_squared_error(predictions, references)}};
  const std::vector<double> x(predictions.begin(), predictions.end()),
      y(references.begin(), references.end());
  if (name == "pearsonr") return {{"pearsonr", pearson(x, y)}};
  return {{"spearmanr", spearman(x, y)}};
}

}  // namespace ct::tasks

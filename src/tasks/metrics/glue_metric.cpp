#include "tasks/metrics/glue_metric.h"

#include <array>
#include <vector>

#include "core/error.h"
#include "tasks/metrics/classification_metrics.h"

namespace ct::tasks {
namespace {

constexpr std::array<std::string_view, 9> kGlueTasks = {"cola", "mnli", "mrpc", "qnli", "qqp",
                                                        "rte",  "sst2", "stsb", "wnli"};

}  // namespace

std::string glue_task_list() {
  std::string s;
  for (auto t : kGlueTasks) s += (s.empty() ? "" : ", ") + std::string(t);
  return s;
}

bool is_glue_task(std::string_view task) {
  for (auto t : kGlueTasks)
    if (t == task) return true;
  return false;
}

Metrics glue_classification_metrics(std::string_view task, std::span<const int64_t> predictions,
                                    std::span<const int64_t> references) {
  CT_CHECK(task.empty() || is_glue_task(task), "--task_name ", task, " is not a GLUE task (expected one of ",
           glue_task_list(), ")");
  CT_CHECK(task != "stsb", "glue metric: stsb is a regression (expected float predictions)");
  Metrics m;
  if (task == "cola") {
    m.push_back({"matthews_correlation", matthews_corrcoef(predictions, references)});
  } else {
    m.push_back({"accuracy", accuracy(predictions, references)});
    if (task == "mrpc" || task == "qqp") m.push_back({"f1", f1_binary(predictions, references)});
  }
  add_combined_score(m);
  return m;
}

Metrics glue_regression_metrics(std::string_view task, std::span<const float> predictions,
                                std::span<const float> references) {
  CT_CHECK(task.empty() || task == "stsb", "glue metric: ", task,
           " is a classification task (expected integer predictions; only stsb is a regression)");
  Metrics m;
  if (task == "stsb") {
    std::vector<double> x(predictions.begin(), predictions.end()), y(references.begin(), references.end());
    m.push_back({"pearson", pearson(x, y)});
    m.push_back({"spearmanr", spearman(x, y)});
  } else {
    m.push_back({"mse", mean_squared_error(predictions, references)});
  }
  add_combined_score(m);
  return m;
}

void add_combined_score(Metrics& m) {
  if (m.size() < 2) return;
  double sum = 0;
  for (const auto& x : m) sum += x.value;
  m.push_back({"combined_score", sum / static_cast<double>(m.size())});
}

}  // namespace ct::tasks

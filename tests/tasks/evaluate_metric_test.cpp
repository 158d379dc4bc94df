// --metric_name's metrics on hand-counted cases (the values scikit-learn gives for them), and the names
// refused before training.
#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "tasks/metrics/evaluate_metric.h"

namespace ct::tasks {
namespace {

double value(const Metrics& m, const std::string& name) {
  for (const auto& x : m)
    if (x.name == name) return x.value;
  ADD_FAILURE() << "no " << name;
  return 0;
}

TEST(EvaluateMetric, BinaryPrecisionRecallF1) {
  // tp 2, fp 1, fn 2: precision 2/3, recall 1/2, f1 4/7.
  const std::vector<int64_t> pred{1, 1, 1, 0, 0, 0}, ref{1, 1, 0, 1, 1, 0};
  EXPECT_DOUBLE_EQ(value(evaluate_classification_metric("precision", pred, ref), "precision"), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(value(evaluate_classification_metric("recall", pred, ref), "recall"), 0.5);
  EXPECT_NEAR(value(evaluate_classification_metric("f1", pred, ref), "f1"), 4.0 / 7.0, 1e-15);
  EXPECT_DOUBLE_EQ(value(evaluate_classification_metric("accuracy", pred, ref), "accuracy"), 0.5);
  // No predicted positive: scikit-learn's zero_division gives 0.
  const std::vector<int64_t> none{0, 0, 0, 0, 0, 0};
  EXPECT_EQ(value(evaluate_classification_metric("precision", none, ref), "precision"), 0.0);
}

TEST(EvaluateMetric, MultiLabelAccuracyIsExactRows) {
  // 3 rows of 2 labels: rows 0 and 2 equal, row 1 differs in one cell.
  const std::vector<int64_t> pred{1, 0, 1, 1, 0, 0}, ref{1, 0, 1, 0, 0, 0};
  EXPECT_DOUBLE_EQ(value(evaluate_multilabel_metric("accuracy", pred, ref, 2), "accuracy"), 2.0 / 3.0);
  // micro F1: tp 2, fp 1, fn 0 -> 0.8
  EXPECT_NEAR(value(evaluate_multilabel_metric("f1", pred, ref, 2), "f1"), 0.8, 1e-15);
}

TEST(EvaluateMetric, Regression) {
  const std::vector<float> p{1, 2, 3, 4}, r{1, 2, 3, 5};
  EXPECT_NEAR(value(evaluate_regression_metric("mse", p, r), "mse"), 0.25, 1e-7);
  EXPECT_NEAR(value(evaluate_regression_metric("spearmanr", p, r), "spearmanr"), 1.0, 1e-12);
  EXPECT_GT(value(evaluate_regression_metric("pearsonr", p, r), "pearsonr"), 0.98);
}

TEST(EvaluateMetric, RefusesNamesItDoesNotCompute) {
  try {
    check_metric_name("bleu", false, false);
    FAIL() << "bleu accepted";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("--metric_name bleu: not a metric coretrain computes for classification"),
        std::string::npos)
        << e.what();
  }
  EXPECT_THROW(check_metric_name("accuracy", true, false), Error);  // not for a regression
  EXPECT_THROW(check_metric_name("precision", false, true), Error);
  EXPECT_NO_THROW(check_metric_name("matthews_correlation", false, false));
}

}  // namespace
}  // namespace ct::tasks

// The scores of HF `evaluate`'s classification and regression metrics, as its scikit-learn and SciPy backends
// compute them: accuracy, F1 (binary with positive class 1; micro over multi-hot rows), Matthews correlation,
// mean squared error, Pearson and Spearman correlation. Inputs are what run_glue/run_classification hand to
// `metric.compute`: argmax ids (or 0/1 cells) for classification, squeezed float predictions for regression.
// Sums run in double; where the Python side sums float32 arrays (mse) the results agree to float32 rounding,
// elsewhere to a few ulps of double (BLAS and NumPy sum in other orders).
#pragma once

#include <cstdint>
#include <span>

namespace ct::tasks {

// sklearn.metrics.accuracy_score: the fraction of equal pairs.
double accuracy(std::span<const int64_t> predictions, std::span<const int64_t> references);

// sklearn.metrics.f1_score(average="binary", pos_label=1): 2PR / (P + R), 0 when there is no positive in
// either side (scikit-learn's zero_division="warn" returns 0). Labels other than 0/1 are refused, as
// scikit-learn refuses a multiclass target with average="binary".
double f1_binary(std::span<const int64_t> predictions, std::span<const int64_t> references);

// sklearn.metrics.f1_score(average="micro") over multi-label rows flattened to cells (0/1): true positives,
// false positives and false negatives summed over every label.
double f1_micro_multilabel(std::span<const int64_t> prediction_cells,
                           std::span<const int64_t> reference_cells);

// sklearn.metrics.matthews_corrcoef, the multiclass form (Gorodkin's R_K over the confusion matrix); 0 when a
// side has a single class.
double matthews_corrcoef(std::span<const int64_t> predictions, std::span<const int64_t> references);

// sklearn.metrics.mean_squared_error.
double mean_squared_error(std::span<const float> predictions, std::span<const float> references);

// scipy.stats.pearsonr's statistic (clipped to [-1, 1]); NaN when a side is constant, as SciPy returns.
double pearson(std::span<const double> x, std::span<const double> y);

// scipy.stats.spearmanr's statistic: Pearson over ranks, ties given their average rank.
double spearman(std::span<const double> x, std::span<const double> y);

}  // namespace ct::tasks

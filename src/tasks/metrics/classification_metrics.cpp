#include "tasks/metrics/classification_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <vector>

#include "core/error.h"

namespace ct::tasks {
namespace {

template <class A, class B>
void check_pairs(const char* metric, std::span<A> predictions, std::span<B> references) {
  CT_CHECK(predictions.size() == references.size(), metric, ": ", predictions.size(), " predictions for ",
           references.size(), " references (expected one prediction per reference)");
  CT_CHECK(!predictions.empty(), metric, ": no predictions to score (the evaluation set is empty)");
}

// F-beta with beta = 1 from the three counts, with scikit-learn 1.2's operation order and its zero_division
// rule (0 where a denominator is 0).
double f1_from_counts(int64_t tp, int64_t fp, int64_t fn) {
  const double p = tp + fp == 0 ? 0.0 : static_cast<double>(tp) / static_cast<double>(tp + fp);
  const double r = tp + fn == 0 ? 0.0 : static_cast<double>(tp) / static_cast<double>(tp + fn);
  const double denom = p + r;
  return denom == 0.0 ? 0.0 : 2.0 * p * r / denom;
}

// Ranks 1..n with ties given their mean rank (scipy.stats.rankdata, method="average").
std::vector<double> average_ranks(std::span<const double> v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;
    while (j < order.size() && v[order[j]] == v[order[i]]) ++j;
    // SciPy computes the average as 0.5 * (dense-rank bounds): (i + 1 + j) / 2 exactly in double.
    const double rank = 0.5 * static_cast<double>(i + 1 + j);
    for (size_t k = i; k < j; ++k) ranks[order[k]] = rank;
    i = j;
  }
  return ranks;
}

bool constant(std::span<const double> v) {
  return std::all_of(v.begin(), v.end(), [&](double x) { return x == v[0]; });
}

}  // namespace

double accuracy(std::span<const int64_t> predictions, std::span<const int64_t> references) {
  check_pairs("accuracy", predictions, references);
  int64_t equal = 0;
  for (size_t i = 0; i < predictions.size(); ++i) equal += predictions[i] == references[i];
  return static_cast<double>(equal) / static_cast<double>(predictions.size());
}

double f1_binary(std::span<const int64_t> predictions, std::span<const int64_t> references) {
  check_pairs("f1", predictions, references);
  std::set<int64_t> present(predictions.begin(), predictions.end());
  present.insert(references.begin(), references.end());
  CT_CHECK(present.size() <= 2, "f1: ", present.size(),
           " distinct labels in predictions and references (expected a binary task: labels 0 and 1)");
  CT_CHECK(present.size() < 2 || present.count(1), "f1: labels ", *present.begin(), " and ",
           *present.rbegin(), " but no label 1 (the positive class of a binary F1)");
  int64_t tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    const bool p = predictions[i] == 1, r = references[i] == 1;
    tp += p && r;
    fp += p && !r;
    fn += !p && r;
  }
  return f1_from_counts(tp, fp, fn);
}

double f1_micro_multilabel(std::span<const int64_t> prediction_cells,
                           std::span<const int64_t> reference_cells) {
  check_pairs("f1 (multilabel)", prediction_cells, reference_cells);
  int64_t tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < prediction_cells.size(); ++i) {
    const int64_t p = prediction_cells[i], r = reference_cells[i];
    CT_CHECK((p == 0 || p == 1) && (r == 0 || r == 1), "f1 (multilabel): cell ", i, " holds prediction ", p,
             " and reference ", r, " (expected multi-hot 0/1 values)");
    tp += p && r;
    fp += p && !r;
    fn += !p && r;
  }
  return f1_from_counts(tp, fp, fn);
}

double matthews_corrcoef(std::span<const int64_t> predictions, std::span<const int64_t> references) {
  check_pairs("matthews_correlation", predictions, references);
  // Per class: how often it is the truth (t), the prediction (p); and how many predictions are right.
  std::map<int64_t, std::pair<double, double>> sums;
  double correct = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    sums[references[i]].first += 1;
    sums[predictions[i]].second += 1;
    correct += predictions[i] == references[i];
  }
  const double n = static_cast<double>(predictions.size());
  double tp = 0, pp = 0, tt = 0;
  for (const auto& [label, s] : sums) {
    tp += s.first * s.second;
    pp += s.second * s.second;
    tt += s.first * s.first;
  }
  const double cov_ytyp = correct * n - tp;
  const double cov_ypyp = n * n - pp;
  const double cov_ytyt = n * n - tt;
  if (cov_ypyp * cov_ytyt == 0) return 0.0;
  return cov_ytyp / std::sqrt(cov_ytyt * cov_ypyp);
}

double mean_squared_error(std::span<const float> predictions, std::span<const float> references) {
  check_pairs("mse", predictions, references);
  // scikit-learn keeps float32 inputs float32: each squared error is a float, the mean is rounded to one.
  double sum = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    const float d = references[i] - predictions[i];
    sum += static_cast<double>(d * d);
  }
  return static_cast<double>(static_cast<float>(sum / static_cast<double>(predictions.size())));
}

double pearson(std::span<const double> x, std::span<const double> y) {
  check_pairs("pearson", x, y);
  CT_CHECK(x.size() >= 2, "pearson: ", x.size(), " pair(s) (expected at least 2, as scipy.stats.pearsonr)");
  if (constant(x) || constant(y)) return std::numeric_limits<double>::quiet_NaN();
  const double n = static_cast<double>(x.size());
  if (x.size() == 2) {
    auto sign = [](double v) { return static_cast<double>((v > 0) - (v < 0)); };
    return sign(x[1] - x[0]) * sign(y[1] - y[0]);
  }
  double xmean = 0, ymean = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    xmean += x[i];
    ymean += y[i];
  }
  xmean /= n;
  ymean /= n;
  double xx = 0, yy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    xx += (x[i] - xmean) * (x[i] - xmean);
    yy += (y[i] - ymean) * (y[i] - ymean);
  }
  const double nx = std::sqrt(xx), ny = std::sqrt(yy);
  double r = 0;
  for (size_t i = 0; i < x.size(); ++i) r += ((x[i] - xmean) / nx) * ((y[i] - ymean) / ny);
  return std::clamp(r, -1.0, 1.0);
}

double spearman(std::span<const double> x, std::span<const double> y) {
  check_pairs("spearmanr", x, y);
  if (x.size() < 2 || constant(x) || constant(y)) return std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> rx = average_ranks(x), ry = average_ranks(y);
  // numpy.corrcoef: the covariance matrix divided by the outer product of its diagonal's square roots.
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    mx += rx[i];
    my += ry[i];
  }
  mx /= n;
  my /= n;
  double cxx = 0, cyy = 0, cxy = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    cxx += (rx[i] - mx) * (rx[i] - mx);
    cyy += (ry[i] - my) * (ry[i] - my);
    cxy += (rx[i] - mx) * (ry[i] - my);
  }
  const double fact = n - 1;
  const double r = cxy / fact / std::sqrt(cxx / fact) / std::sqrt(cyy / fact);
  return std::clamp(r, -1.0, 1.0);
}

}  // namespace ct::tasks

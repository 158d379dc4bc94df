// Cross-entropy with ignore_index: loss vs direct formula, gradient vs finite differences, strided QA logits,
// all-ignored NaN (torch semantics), bad targets.
#include "kernels/cross_entropy.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

TEST(CrossEntropy, LossAndGradientOnStridedQaLogits) {
  // qa_outputs result [B*T, 2]: start logits are column 0 (stride 2), rows of T*2.
  const int64_t B = 4, T = 9;
  auto logits = test::randn(B * T * 2, 1, 2.0f);
  std::vector<int64_t> targets{3, T, 0,
                               8};  // T is the ignored index (HF clamps out-of-window positions to T)
  std::vector<float> lse(B);
  const float loss = cross_entropy_forward(lse.data(), logits.data(), targets.data(), B, T, 2 * T, 2, T);
  double want = 0.0;
  for (int64_t b : {0, 2, 3}) {
    double s = 0.0;
    for (int64_t t = 0; t < T; ++t) s += std::exp(static_cast<double>(logits[b * 2 * T + t * 2]));
    want += std::log(s) - logits[b * 2 * T + targets[b] * 2];
  }
  EXPECT_NEAR(loss, want / 3, 1e-5);
  std::vector<float> d(B * T * 2, 0.0f);
  cross_entropy_backward(d.data(), logits.data(), lse.data(), targets.data(), B, T, 2 * T, 2, T, 0.5f);
  for (int64_t t = 0; t < T; ++t) EXPECT_EQ(d[1 * 2 * T + t * 2], 0.0f);  // ignored row
  for (int64_t i = 1; i < B * T * 2; i += 2) EXPECT_EQ(d[i], 0.0f);       // the other column is untouched
  auto f = [&] {
    std::vector<float> l(B);
    return 0.5 * cross_entropy_forward(l.data(), logits.data(), targets.data(), B, T, 2 * T, 2, T);
  };
  test::expect_fd(f, logits.data(), d.data(), B * T * 2, 1e-2, 1e-3, 1e-2, "dlogits", 100);
}

// A masked LM's rows (a vocabulary wide, -100 ignored) run in parallel: the same loss and gradient bits for
// any thread count, and the loss is the mean of the direct formula over the kept rows.
TEST(CrossEntropy, VocabularyRowsAreThreadInvariant) {
  const int64_t B = 9, V = 20000;
  auto logits = test::randn(B * V, 5, 3.0f);
  std::vector<int64_t> targets{3, -100, 19999, 0, -100, 7, 12345, 1, 2};
  auto run = [&](int threads, std::vector<float>& d) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<float> lse(B);
    const float loss = cross_entropy_forward(lse.data(), logits.data(), targets.data(), B, V, V, 1, -100);
    d.assign(B * V, 0.0f);
    cross_entropy_backward(d.data(), logits.data(), lse.data(), targets.data(), B, V, V, 1, -100, 1.0f);
    omp_set_num_threads(saved);
    return loss;
  };
  std::vector<float> d1, d3;
  const float l1 = run(1, d1), l3 = run(3, d3);
  EXPECT_EQ(l1, l3);
  EXPECT_EQ(d1, d3);
  double want = 0.0;
  for (int64_t b : {0, 2, 3, 5, 6, 7, 8}) {
    double mx = -1e30, s = 0.0;
    for (int64_t t = 0; t < V; ++t) mx = std::max(mx, static_cast<double>(logits[b * V + t]));
    for (int64_t t = 0; t < V; ++t) s += std::exp(logits[b * V + t] - mx);
    want += mx + std::log(s) - logits[b * V + targets[b]];
  }
  EXPECT_NEAR(l1, want / 7, 1e-5);
}

TEST(CrossEntropy, AllIgnoredGivesNaNLikeTorch) {
  std::vector<float> logits(6, 0.5f), lse(2), d(6, 0.0f);
  std::vector<int64_t> t{3, 3};
  EXPECT_TRUE(std::isnan(cross_entropy_forward(lse.data(), logits.data(), t.data(), 2, 3, 3, 1, 3)));
  cross_entropy_backward(d.data(), logits.data(), lse.data(), t.data(), 2, 3, 3, 1, 3, 1.0f);
  EXPECT_TRUE(std::isnan(d[0]));
}

TEST(CrossEntropy, TargetOutsideRowThrows) {
  std::vector<float> logits(6), lse(2);
  std::vector<int64_t> t{1, 7};
  EXPECT_THROW(cross_entropy_forward(lse.data(), logits.data(), t.data(), 2, 3, 3, 1, -100), Error);
  t = {-1, 0};
  EXPECT_THROW(cross_entropy_forward(lse.data(), logits.data(), t.data(), 2, 3, 3, 1, -100), Error);
}

}  // namespace
}  // namespace ct::kernels

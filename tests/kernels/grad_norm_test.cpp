// Global norm and clipping: torch's clip_grad_norm_ values, clip only above max_norm, thread-count
// invariance.
#include "kernels/grad_norm.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "test_util.h"

namespace ct::kernels {
namespace {

TEST(GradNorm, ClipsLikeTorchAndReturnsPreClipNorm) {
  std::vector<float> g{3.0f, 4.0f, 0.0f, 12.0f};
  EXPECT_DOUBLE_EQ(clip_grad_norm(g.data(), 4, 1.0), 13.0);
  // torch 1.13: clip_grad_norm_(max_norm=1.0) on [3, 4, 0, 12]
  test::expect_close(g, {0.23076921701431274f, 0.307692289352417f, 0.0f, 0.923076868057251f}, 1e-7, 1e-6,
                     "g");
}

TEST(GradNorm, NoClipBelowMaxOrWhenDisabled) {
  std::vector<float> g{0.3f, 0.4f}, h = g;
  EXPECT_NEAR(clip_grad_norm(g.data(), 2, 1.0), 0.5, 1e-7);
  EXPECT_EQ(g, h);
  std::vector<float> big{30.0f, 40.0f}, big0 = big;
  EXPECT_NEAR(clip_grad_norm(big.data(), 2, 0.0), 50.0, 1e-6);
  EXPECT_EQ(big, big0);
}

TEST(GradNorm, CoefficientIsTorchsClampedToOne) {
  EXPECT_EQ(clip_coefficient(13.0, 1.0), static_cast<float>(1.0 / (13.0 + 1e-6)));
  EXPECT_EQ(clip_coefficient(0.5, 1.0), 1.0f);
  EXPECT_EQ(clip_coefficient(1.0, 1.0), static_cast<float>(1.0 / (1.0 + 1e-6)));  // < 1 by the 1e-6
  EXPECT_EQ(clip_coefficient(1.0 - 1e-6, 1.0), 1.0f);
  EXPECT_TRUE(std::isnan(clip_coefficient(NAN, 1.0)));
  EXPECT_EQ(clip_coefficient(INFINITY, 1.0), 0.0f);
  std::vector<float> g{3.0f, 4.0f}, h = g;
  scale_grads(g.data(), 2, 1.0f);
  EXPECT_EQ(g, h);
}

TEST(GradNorm, SameForAnyThreadCountAndMatchesDoubleSum) {
  const int64_t n = 1000001;
  auto g = test::randn(n, 9);
  double want = 0.0;
  for (float v : g) want += static_cast<double>(v) * v;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const double one = grad_norm(g.data(), n);
  omp_set_num_threads(2);
  const double two = grad_norm(g.data(), n);
  omp_set_num_threads(saved);
  EXPECT_EQ(one, two);
  EXPECT_NEAR(one, std::sqrt(want), 1e-9 * std::sqrt(want));
}

TEST(GradNorm, NonFiniteNormPoisonsGradientsLikeTorch) {
  std::vector<float> g{1.0f, NAN, 2.0f};
  EXPECT_TRUE(std::isnan(clip_grad_norm(g.data(), 3, 1.0)));
  EXPECT_TRUE(std::isnan(g[0]));
}

// A slab whose middle tensor is [rows, width] with only `live` rows non-zero, placed so that chunks of the
// norm straddle its ends and its rows.
struct RowSlab {
  int64_t offset = 5003, rows = 3000, width = 37, n = 0;
  std::vector<float> g;
  std::vector<uint8_t> flags;
  RowFlags live() const { return {offset, rows, width, flags.data()}; }
};

RowSlab row_slab(const std::vector<int64_t>& live_rows, uint64_t seed) {
  RowSlab s;
  s.n = s.offset + s.rows * s.width + 7001;
  s.g = test::randn(s.n, seed);
  s.flags.assign(static_cast<size_t>(s.rows), 0);
  for (int64_t r = 0; r < s.rows; ++r) {
    const bool is_live = std::find(live_rows.begin(), live_rows.end(), r) != live_rows.end();
    // A flagged row may still be zero (a live row whose gradient came out 0): flags over-approximate.
    if (is_live) s.flags[static_cast<size_t>(r)] = 1;
    if (!is_live || r == live_rows.back())
      std::fill(s.g.begin() + s.offset + r * s.width, s.g.begin() + s.offset + (r + 1) * s.width, 0.0f);
  }
  return s;
}

TEST(GradNorm, LiveRowsGiveTheDenseNormAndClippingBitForBit) {
  const RowSlab s = row_slab({0, 1, 17, 442, 443, 1500, 2999, 2000}, 3);
  EXPECT_EQ(grad_sq_sum(s.g.data(), s.n, s.live()), grad_sq_sum(s.g.data(), s.n));
  for (double max_norm : {1.0, 0.0, 1e9}) {
    std::vector<float> dense = s.g, sparse = s.g;
    EXPECT_EQ(clip_grad_norm(sparse.data(), s.n, max_norm, s.live()),
              clip_grad_norm(dense.data(), s.n, max_norm));
    EXPECT_EQ(0, std::memcmp(dense.data(), sparse.data(), dense.size() * sizeof(float))) << max_norm;
  }
  // No live row at all: the tensor is not read, and the rest still is.
  const RowSlab none = row_slab({2000}, 4);
  EXPECT_EQ(grad_sq_sum(none.g.data(), none.n, none.live()), grad_sq_sum(none.g.data(), none.n));
}

TEST(GradNorm, NaNNormScalesEveryElementEvenWithLiveRows) {
  RowSlab s = row_slab({5, 2000}, 5);
  s.g[static_cast<size_t>(s.offset + 5 * s.width)] = std::nanf("");
  std::vector<float> g = s.g;
  EXPECT_TRUE(std::isnan(clip_grad_norm(g.data(), s.n, 1.0, s.live())));
  for (float v : g) ASSERT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace ct::kernels

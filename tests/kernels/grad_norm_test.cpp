// Global norm and clipping: torch's clip_grad_norm_ values, clip only above max_norm, thread-count
// invariance.
#include "kernels/grad_norm.h"

#include <omp.h>

#include <cmath>

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

}  // namespace
}  // namespace ct::kernels

// Dropout: mask equals philox_uniform's definition, thread-count invariance, scaling, backward semantics.
#include "kernels/dropout.h"

#include <omp.h>

#include "core/error.h"
#include "core/rng.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

TEST(Dropout, MaskIsPhiloxUniformAtOrAboveP) {
  const int64_t n = 1000;
  DropoutSite s{0.3f, 7, 3, 5};  // odd offset: the first element sits mid-run
  // Counter c = 64 g + 16 w + j uses word w of Philox block 16 g + j (see philox_lanes.h).
  std::vector<float> u(n);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t c = s.offset + i;
    u[i] = u32_to_unit_float(philox4x32(s.seed, s.stream, c / 64 * 16 + c % 16)[c % 64 / 16]);
  }
  std::vector<uint8_t> keep(n);
  dropout_mask_reference(keep.data(), n, s);
  std::vector<float> x(n, 2.0f), y(n);
  dropout_forward(y.data(), nullptr, x.data(), n, s);
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(keep[i], u[i] >= 0.3f);
    EXPECT_FLOAT_EQ(y[i], keep[i] ? 2.0f / 0.7f : 0.0f);
    kept += keep[i];
  }
  EXPECT_NEAR(kept / 1000.0, 0.7, 0.06);
}

TEST(Dropout, SplitCallsAndThreadCountsGiveTheSameMask) {
  const int64_t n = 100003;
  auto x = test::randn(n, 1);
  DropoutSite s{0.1f, 42, 9, 1ull << 40};
  std::vector<float> whole(n), parts(n), one(n);
  dropout_forward(whole.data(), nullptr, x.data(), n, s);
  DropoutSite first = s, second = s;
  second.offset += 777;
  dropout_forward(parts.data(), nullptr, x.data(), 777, first);
  dropout_forward(parts.data() + 777, nullptr, x.data() + 777, n - 777, second);
  EXPECT_EQ(whole, parts);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  dropout_forward(one.data(), nullptr, x.data(), n, s);
  omp_set_num_threads(saved);
  EXPECT_EQ(whole, one);
}

TEST(Dropout, ZeroProbabilityIsIdentityAndInPlaceWorks) {
  auto x = test::randn(513, 2);
  std::vector<float> y(513);
  std::vector<bf16> ybf(513);
  dropout_forward(y.data(), ybf.data(), x.data(), 513, DropoutSite{0.0f, 1, 2, 3});
  EXPECT_EQ(x, y);
  for (int i = 0; i < 513; ++i) EXPECT_EQ(ybf[i].bits, to_bf16(x[i]).bits);
  DropoutSite s{0.5f, 1, 2, 3};
  std::vector<float> out(513), inplace = x;
  dropout_forward(out.data(), nullptr, x.data(), 513, s);
  dropout_forward(inplace.data(), nullptr, inplace.data(), 513, s);
  EXPECT_EQ(out, inplace);
}

TEST(Dropout, BackwardAddsTheSameMaskedScaledGradient) {
  const int64_t n = 4099;
  auto dy = test::randn(n, 3);
  DropoutSite s{0.25f, 5, 6, 7};
  std::vector<float> dx(n, 1.0f), masked(n);
  dropout_backward(dx.data(), dy.data(), n, s);
  dropout_forward(masked.data(), nullptr, dy.data(), n, s);
  for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(dx[i], 1.0f + masked[i], 1e-6f);  // fma vs two roundings
  // The gradient of sum(dropout(x) * dy) is exactly that (dropout is linear in x).
  std::vector<float> g(n, 0.0f);
  dropout_backward(g.data(), dy.data(), n, DropoutSite{0.0f, 0, 0, 0});
  EXPECT_EQ(g, dy);
}

TEST(Dropout, RejectsProbabilityOutsideRange) {
  std::vector<float> x(4), y(4);
  EXPECT_THROW(dropout_forward(y.data(), nullptr, x.data(), 4, DropoutSite{1.0f, 0, 0, 0}), Error);
  EXPECT_THROW(dropout_forward(y.data(), nullptr, x.data(), 4, DropoutSite{-0.1f, 0, 0, 0}), Error);
  EXPECT_THROW(dropout_backward(y.data(), x.data(), 4, DropoutSite{1.5f, 0, 0, 0}), Error);
}

}  // namespace
}  // namespace ct::kernels

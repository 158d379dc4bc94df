// Helpers shared by the kernel tests: deterministic random data, tolerant comparisons, central finite
// differences.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/rng.h"
#include "kernels/cpu_features.h"

// Skips the calling test where oneDNN cannot create a bf16 matmul (AVX2-only CPUs with oneDNN 2.x): for what
// needs oneDNN's own (the bf16 peak); kernels::gemm widens bf16 products there instead.
#define CT_SKIP_WITHOUT_BF16_MATMUL()          \
  if (!::ct::kernels::bf16_matmul_supported()) \
  GTEST_SKIP() << ::ct::kernels::bf16_matmul_unavailable_reason() << ": bf16 products cannot run here"

namespace ct::kernels::test {

inline std::vector<float> randn(int64_t n, uint64_t seed, float scale = 1.0f) {
  Generator g(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<float>(g.normal()) * scale;
  return v;
}

// max |a - b| / (atol + rtol * |b|) must stay <= 1.
inline void expect_close(const float* a, const float* b, int64_t n, double atol, double rtol,
                         const std::string& what) {
  double worst = 0.0;
  int64_t at = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double r = std::fabs(static_cast<double>(a[i]) - b[i]) / (atol + rtol * std::fabs(b[i]));
    if (!(r <= worst)) {  // also catches NaN
      worst = r;
      at = i;
    }
  }
  EXPECT_LE(worst, 1.0) << what << ": worst element " << at << " got " << (at >= 0 ? a[at] : 0.f) << " want "
                        << (at >= 0 ? b[at] : 0.f);
}

inline void expect_close(const std::vector<float>& a, const std::vector<float>& b, double atol, double rtol,
                         const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  expect_close(a.data(), b.data(), static_cast<int64_t>(a.size()), atol, rtol, what);
}

// Checks grad[i] against (loss(x + eps) - loss(x - eps)) / 2eps for up to max_checks indices spread over x.
inline void expect_fd(const std::function<double()>& loss, float* x, const float* grad, int64_t n, double eps,
                      double atol, double rtol, const std::string& what, int64_t max_checks = 48) {
  const int64_t step = n > max_checks ? n / max_checks : 1;
  for (int64_t i = 0; i < n; i += step) {
    const float orig = x[i];
    x[i] = static_cast<float>(orig + eps);
    const double up = loss();
    x[i] = static_cast<float>(orig - eps);
    const double down = loss();
    x[i] = orig;
    const double fd = (up - down) / (2.0 * eps);
    EXPECT_NEAR(grad[i], fd, atol + rtol * std::fabs(fd)) << what << " element " << i;
  }
}

inline double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

}  // namespace ct::kernels::test

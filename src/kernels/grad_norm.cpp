// Global L2 norm in double over fixed chunks summed in order (thread-count invariant), and torch-style
// clipping.
#include "kernels/grad_norm.h"

#include <cmath>

namespace ct::kernels {
namespace {

constexpr int64_t kChunk = 1 << 14;

}  // namespace

double grad_sq_sum(const float* g, int64_t n) {
  const int64_t nchunks = (n + kChunk - 1) / kChunk;
  double total = 0.0;
  // Chunks are processed in parallel but combined in chunk order through an ordered accumulation per group.
  constexpr int64_t kGroup = 256;
  for (int64_t g0 = 0; g0 < nchunks; g0 += kGroup) {
    double part[kGroup];
    const int64_t ng = nchunks - g0 < kGroup ? nchunks - g0 : kGroup;
#pragma omp parallel for schedule(static) if (ng > 1)
    for (int64_t c = 0; c < ng; ++c) {
      const int64_t b = (g0 + c) * kChunk, e = b + kChunk < n ? b + kChunk : n;
      double s = 0.0;
#pragma omp simd reduction(+ : s)
      for (int64_t i = b; i < e; ++i) s += static_cast<double>(g[i]) * g[i];
      part[c] = s;
    }
    for (int64_t c = 0; c < ng; ++c) total += part[c];
  }
  return total;
}

double grad_norm(const float* g, int64_t n) {
  return std::sqrt(grad_sq_sum(g, n));
}

void scale_inplace(float* g, int64_t n, float coef) {
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) g[i] *= coef;
}

double clip_grad_norm(float* g, int64_t n, double max_norm) {
  const double norm = grad_norm(g, n);
  if (max_norm <= 0.0) return norm;
  const double coef = max_norm / (norm + 1e-6);
  // torch clamps the coefficient to 1 (NaN stays NaN and poisons the gradients, as in torch 1.13).
  if (std::isnan(coef) || coef < 1.0) scale_inplace(g, n, static_cast<float>(coef));
  return norm;
}

}  // namespace ct::kernels

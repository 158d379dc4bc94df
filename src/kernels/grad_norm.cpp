// Global L2 norm in double over fixed chunks summed in order (thread-count invariant), and torch-style
// clipping.
#include "kernels/grad_norm.h"

#include <cmath>
#include <vector>

namespace ct::kernels {
namespace {

constexpr int64_t kChunk = 1 << 14;

}  // namespace

double grad_sq_sum(const float* g, int64_t n) {
  const int64_t nchunks = (n + kChunk - 1) / kChunk;
  // Per-chunk partial sums, added in chunk order afterwards: the result does not depend on thread count. The
  // buffer only grows, so steady-state calls allocate nothing.
  thread_local std::vector<double> part;
  if (static_cast<int64_t>(part.size()) < nchunks) part.resize(static_cast<size_t>(nchunks));
  double* pp = part.data();
#pragma omp parallel for schedule(static) if (nchunks > 1)
  for (int64_t c = 0; c < nchunks; ++c) {
    const int64_t b = c * kChunk, e = b + kChunk < n ? b + kChunk : n;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = b; i < e; ++i) s += static_cast<double>(g[i]) * g[i];
    pp[c] = s;
  }
  double total = 0.0;
  for (int64_t c = 0; c < nchunks; ++c) total += pp[c];
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

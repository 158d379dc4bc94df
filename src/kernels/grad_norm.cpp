// Global L2 norm in double over fixed chunks summed in order (thread-count invariant), and torch-style
// clipping.
#include "kernels/grad_norm.h"

#include <cmath>
#include <vector>

#include "core/error.h"

namespace ct::kernels {
namespace {

constexpr int64_t kChunk = kGradNormChunk;

// True when chunk [b, e) lies inside the tensor and none of the rows it touches is live.
bool known_zero(const RowFlags& live, int64_t b, int64_t e) {
  if (b < live.offset || e > live.end()) return false;
  const int64_t r0 = (b - live.offset) / live.width, r1 = (e - 1 - live.offset) / live.width;
  for (int64_t r = r0; r <= r1; ++r)
    if (live.flags[r]) return false;
  return true;
}

}  // namespace

void grad_sq_chunk_sums(const float* g, int64_t n, int64_t first, int64_t last, double* parts,
                        const RowFlags& live) {
  const int64_t nchunks = (n + kChunk - 1) / kChunk;
  CT_CHECK(first >= 0 && first <= last && last <= nchunks, "grad_sq_chunk_sums: chunks [", first, ", ", last,
           ") outside [0, ", nchunks, "]");
  // The chunks to read; a known-zero chunk's sum is 0.0, exactly what reading it would give. The list only
  // grows, so steady-state calls allocate nothing.
  thread_local std::vector<int64_t> todo;
  todo.clear();
  for (int64_t c = first; c < last; ++c) {
    const int64_t b = c * kChunk, e = b + kChunk < n ? b + kChunk : n;
    if (live.active() && known_zero(live, b, e))
      parts[c] = 0.0;
    else
      todo.push_back(c);
  }
  const int64_t* tp = todo.data();
  const int64_t ntodo = static_cast<int64_t>(todo.size());
#pragma omp parallel for schedule(static) if (ntodo > 1)
  for (int64_t k = 0; k < ntodo; ++k) {
    const int64_t c = tp[k];
    const int64_t b = c * kChunk, e = b + kChunk < n ? b + kChunk : n;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = b; i < e; ++i) s += static_cast<double>(g[i]) * g[i];
    parts[c] = s;
  }
}

double sum_chunks(const double* parts, int64_t count) {
  double total = 0.0;
  for (int64_t c = 0; c < count; ++c) total += parts[c];
  return total;
}

double grad_sq_sum(const float* g, int64_t n, const RowFlags& live) {
  const int64_t nchunks = (n + kChunk - 1) / kChunk;
  // Per-chunk partial sums, added in chunk order afterwards: the result does not depend on thread count.
  thread_local std::vector<double> part;
  if (static_cast<int64_t>(part.size()) < nchunks) part.resize(static_cast<size_t>(nchunks));
  grad_sq_chunk_sums(g, n, 0, nchunks, part.data(), live);
  return sum_chunks(part.data(), nchunks);
}

double grad_norm(const float* g, int64_t n, const RowFlags& live) {
  return std::sqrt(grad_sq_sum(g, n, live));
}

void scale_inplace(float* g, int64_t n, float coef) {
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) g[i] *= coef;
}

float clip_coefficient(double norm, double max_norm) {
  const double coef = max_norm / (norm + 1e-6);
  // torch clamps the coefficient to 1 (NaN stays NaN and poisons the gradients, as in torch 1.13).
  return std::isnan(coef) || coef < 1.0 ? static_cast<float>(coef) : 1.0f;
}

void scale_grads(float* g, int64_t n, float coef, const RowFlags& live) {
  if (std::isnan(coef))
    scale_inplace(g, n, coef);
  else if (coef != 1.0f)
    for_each_flag_run(live, 0, n, [&](int64_t b, int64_t e, bool flagged) {
      if (flagged) scale_inplace(g + b, e - b, coef);
    });
}

double clip_grad_norm(float* g, int64_t n, double max_norm, const RowFlags& live) {
  const double norm = grad_norm(g, n, live);
  if (max_norm > 0.0) scale_grads(g, n, clip_coefficient(norm, max_norm), live);
  return norm;
}

}  // namespace ct::kernels

// Cross-entropy with ignore_index and mean reduction: QA spans (B rows of T logits), token classes, and a
// masked LM's vocabulary rows (parallel over rows there).
#include "kernels/cross_entropy.h"

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"

namespace ct::kernels {

float cross_entropy_forward(float* lse, const float* logits, const int64_t* targets, int64_t B, int64_t T,
                            int64_t row_stride, int64_t col_stride, int64_t ignore_index) {
  for (int64_t b = 0; b < B; ++b)
    CT_CHECK(targets[b] == ignore_index || (targets[b] >= 0 && targets[b] < T), "cross_entropy: target[", b,
             "] = ", targets[b], " outside [0, ", T, ") and not ignore_index ", ignore_index);
  // Rows in parallel (a masked LM's rows span the vocabulary), each summed in order, then the row losses in
  // row order: the same value for any thread count.
  std::vector<double> row_loss(static_cast<size_t>(B), 0.0);
#pragma omp parallel for schedule(static) if (B * T > 65536)
  for (int64_t b = 0; b < B; ++b) {
    const float* x = logits + b * row_stride;
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t t = 0; t < T; ++t) mx = std::fmax(mx, x[t * col_stride]);
    double s = 0.0;
    for (int64_t t = 0; t < T; ++t) s += std::exp(x[t * col_stride] - mx);
    const double l = mx + std::log(s);
    lse[b] = static_cast<float>(l);
    if (targets[b] != ignore_index) row_loss[b] = l - x[targets[b] * col_stride];
  }
  double total = 0.0;
  int64_t count = 0;
  for (int64_t b = 0; b < B; ++b)
    if (targets[b] != ignore_index) total += row_loss[b], ++count;
  // torch: mean over zero elements is 0/0 = NaN.
  return count ? static_cast<float>(total / count) : std::numeric_limits<float>::quiet_NaN();
}

void cross_entropy_backward(float* dlogits, const float* logits, const float* lse, const int64_t* targets,
                            int64_t B, int64_t T, int64_t row_stride, int64_t col_stride,
                            int64_t ignore_index, float dloss) {
  int64_t count = 0;
  for (int64_t b = 0; b < B; ++b) count += targets[b] != ignore_index;
  const float scale = count ? dloss / static_cast<float>(count) : std::numeric_limits<float>::quiet_NaN();
#pragma omp parallel for schedule(static) if (B * T > 65536)
  for (int64_t b = 0; b < B; ++b) {
    if (targets[b] == ignore_index && count) continue;
    const float* x = logits + b * row_stride;
    float* d = dlogits + b * row_stride;
    for (int64_t t = 0; t < T; ++t) {
      const float p = std::exp(x[t * col_stride] - lse[b]);
      d[t * col_stride] += scale * (p - (t == targets[b] ? 1.0f : 0.0f));
    }
  }
}

}  // namespace ct::kernels

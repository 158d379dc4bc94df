#include "kernels/rmsnorm.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ct::kernels {

namespace {

constexpr int64_t kRowBlock = 32;  // dweight's partial sums: fixed row blocks, whatever the thread count

inline float scale_of(const float* w, int64_t j, bool unit_offset) {
  return unit_offset ? 1.0f + w[j] : w[j];
}

}  // namespace

void rmsnorm_forward(float* out, bf16* out_bf16, float* rstd, const float* inp, const float* weight,
                     int64_t N, int64_t C, const RmsNormSpec& spec) {
#pragma omp parallel for schedule(static) if (N * C > 16384)
  for (int64_t r = 0; r < N; ++r) {
    const float* x = inp + r * C;
    float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
    for (int64_t j = 0; j < C; ++j) ss += x[j] * x[j];
    const float rs = 1.0f / std::sqrt(ss / static_cast<float>(C) + spec.eps);
    rstd[r] = rs;
    float* y = out + r * C;
#pragma omp simd
    for (int64_t j = 0; j < C; ++j) y[j] = x[j] * rs * scale_of(weight, j, spec.unit_offset);
    if (out_bf16) f32_to_bf16(y, out_bf16 + r * C, C);
  }
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                      const float* rstd, int64_t N, int64_t C, const RmsNormSpec& spec) {
  const int64_t blocks = (N + kRowBlock - 1) / kRowBlock;
  std::vector<float> partial(dweight ? blocks * C : 0, 0.0f);
#pragma omp parallel for schedule(static) if (N * C > 16384)
  for (int64_t b = 0; b < blocks; ++b) {
    float* pw = dweight ? partial.data() + b * C : nullptr;
    for (int64_t r = b * kRowBlock; r < std::min(N, (b + 1) * kRowBlock); ++r) {
      const float* x = inp + r * C;
      const float* g = dout + r * C;
      const float rs = rstd[r];
      // dn = g * scale; dx = rs * (dn - n * mean(dn * n)) with n = x * rs.
      float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
      for (int64_t j = 0; j < C; ++j) dot += g[j] * scale_of(weight, j, spec.unit_offset) * x[j] * rs;
      const float m = dot / static_cast<float>(C);
      float* dx = dinp + r * C;
#pragma omp simd
      for (int64_t j = 0; j < C; ++j) {
        const float n = x[j] * rs;
        dx[j] += rs * (g[j] * scale_of(weight, j, spec.unit_offset) - n * m);
      }
      if (pw) {
#pragma omp simd
        for (int64_t j = 0; j < C; ++j) pw[j] += g[j] * x[j] * rs;
      }
    }
  }
  if (!dweight) return;
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t j = 0; j < C; ++j) dweight[j] += partial[b * C + j];
}

void rmsnorm_forward_reference(float* out, const float* inp, const float* weight, int64_t N, int64_t C,
                               const RmsNormSpec& spec) {
  for (int64_t r = 0; r < N; ++r) {
    double ss = 0.0;
    for (int64_t j = 0; j < C; ++j) ss += static_cast<double>(inp[r * C + j]) * inp[r * C + j];
    const double rs = 1.0 / std::sqrt(ss / static_cast<double>(C) + spec.eps);
    for (int64_t j = 0; j < C; ++j)
      out[r * C + j] =
          static_cast<float>(inp[r * C + j] * rs * (spec.unit_offset ? 1.0 + weight[j] : weight[j]));
  }
}

void rmsnorm_backward_reference(float* dinp, float* dweight, const float* dout, const float* inp,
                                const float* weight, int64_t N, int64_t C, const RmsNormSpec& spec) {
  for (int64_t r = 0; r < N; ++r) {
    const float* x = inp + r * C;
    const float* g = dout + r * C;
    double ss = 0.0;
    for (int64_t j = 0; j < C; ++j) ss += static_cast<double>(x[j]) * x[j];
    const double rs = 1.0 / std::sqrt(ss / static_cast<double>(C) + spec.eps);
    double dot = 0.0;
    for (int64_t j = 0; j < C; ++j)
      dot += g[j] * (spec.unit_offset ? 1.0 + weight[j] : weight[j]) * x[j] * rs;
    for (int64_t j = 0; j < C; ++j) {
      const double s = spec.unit_offset ? 1.0 + weight[j] : weight[j];
      dinp[r * C + j] += static_cast<float>(rs * (g[j] * s - x[j] * rs * dot / static_cast<double>(C)));
      if (dweight) dweight[j] += static_cast<float>(g[j] * x[j] * rs);
    }
  }
}

}  // namespace ct::kernels

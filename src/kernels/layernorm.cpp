// Layer norm over rows of C: rows in parallel for the forward and dinp; dweight/dbias by column blocks
// walking rows in order, so their sums are identical for any thread count.
#include "kernels/layernorm.h"

#include <cmath>

namespace ct::kernels {

void layernorm_forward(float* out, bf16* out_bf16, float* mean, float* rstd, const float* inp,
                       const float* weight, const float* bias, int64_t N, int64_t C, float eps) {
#pragma omp parallel for schedule(static) if (N * C > 16384)
  for (int64_t r = 0; r < N; ++r) {
    const float* x = inp + r * C;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < C; ++i) s += x[i];
    const float m = s / C;
    float v = 0.0f;
#pragma omp simd reduction(+ : v)
    for (int64_t i = 0; i < C; ++i) v += (x[i] - m) * (x[i] - m);
    const float rs = 1.0f / std::sqrt(v / C + eps);
    float* o = out + r * C;
    if (bias) {
#pragma omp simd
      for (int64_t i = 0; i < C; ++i) o[i] = (x[i] - m) * rs * weight[i] + bias[i];
    } else {  // LayerNorm(bias=False) (ModernBERT)
#pragma omp simd
      for (int64_t i = 0; i < C; ++i) o[i] = (x[i] - m) * rs * weight[i];
    }
    if (out_bf16) {
      bf16* ob = out_bf16 + r * C;
      for (int64_t i = 0; i < C; ++i) ob[i] = to_bf16(o[i]);
    }
    mean[r] = m;
    rstd[r] = rs;
  }
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int64_t N, int64_t C,
                        bool accumulate_dinp) {
  if (dinp) {
#pragma omp parallel for schedule(static) if (N * C > 16384)
    for (int64_t r = 0; r < N; ++r) {
      const float* x = inp + r * C;
      const float* dy = dout + r * C;
      const float m = mean[r], rs = rstd[r];
      // dxhat = dy * w; dx = rs * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
      float s1 = 0.0f, s2 = 0.0f;
#pragma omp simd reduction(+ : s1, s2)
      for (int64_t i = 0; i < C; ++i) {
        const float dxh = dy[i] * weight[i];
        s1 += dxh;
        s2 += dxh * (x[i] - m) * rs;
      }
      s1 /= C;
      s2 /= C;
      float* dx = dinp + r * C;
      if (accumulate_dinp) {
#pragma omp simd
        for (int64_t i = 0; i < C; ++i) dx[i] += rs * (dy[i] * weight[i] - s1 - (x[i] - m) * rs * s2);
      } else {
#pragma omp simd
        for (int64_t i = 0; i < C; ++i) dx[i] = rs * (dy[i] * weight[i] - s1 - (x[i] - m) * rs * s2);
      }
    }
  }
  if (dweight || dbias) {
    constexpr int64_t kCols = 64;
    const int64_t nblocks = (C + kCols - 1) / kCols;
#pragma omp parallel for schedule(static) if (N * C > 16384)
    for (int64_t blk = 0; blk < nblocks; ++blk) {
      const int64_t c0 = blk * kCols, c1 = c0 + kCols < C ? c0 + kCols : C;
      float gw[kCols] = {}, gb[kCols] = {};
      for (int64_t r = 0; r < N; ++r) {
        const float* x = inp + r * C;
        const float* dy = dout + r * C;
        const float m = mean[r], rs = rstd[r];
#pragma omp simd
        for (int64_t i = c0; i < c1; ++i) {
          gw[i - c0] += dy[i] * (x[i] - m) * rs;
          gb[i - c0] += dy[i];
        }
      }
      for (int64_t i = c0; i < c1; ++i) {
        if (dweight) dweight[i] += gw[i - c0];
        if (dbias) dbias[i] += gb[i - c0];
      }
    }
  }
}

void layernorm_forward_reference(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                 const float* bias, int64_t N, int64_t C, float eps) {
  for (int64_t r = 0; r < N; ++r) {
    const float* x = inp + r * C;
    double s = 0.0;
    for (int64_t i = 0; i < C; ++i) s += x[i];
    const double m = s / C;
    double v = 0.0;
    for (int64_t i = 0; i < C; ++i) v += (x[i] - m) * (x[i] - m);
    const double rs = 1.0 / std::sqrt(v / C + eps);
    for (int64_t i = 0; i < C; ++i)
      out[r * C + i] = static_cast<float>((x[i] - m) * rs * weight[i] + (bias ? bias[i] : 0.0f));
    mean[r] = static_cast<float>(m);
    rstd[r] = static_cast<float>(rs);
  }
}

void layernorm_backward_reference(float* dinp, float* dweight, float* dbias, const float* dout,
                                  const float* inp, const float* weight, const float* mean, const float* rstd,
                                  int64_t N, int64_t C) {
  for (int64_t r = 0; r < N; ++r) {
    const float* x = inp + r * C;
    const float* dy = dout + r * C;
    double s1 = 0.0, s2 = 0.0;
    for (int64_t i = 0; i < C; ++i) {
      const double xh = (x[i] - static_cast<double>(mean[r])) * rstd[r];
      s1 += static_cast<double>(dy[i]) * weight[i];
      s2 += static_cast<double>(dy[i]) * weight[i] * xh;
      if (dweight) dweight[i] += static_cast<float>(dy[i] * xh);
      if (dbias) dbias[i] += dy[i];
    }
    for (int64_t i = 0; i < C; ++i) {
      const double xh = (x[i] - static_cast<double>(mean[r])) * rstd[r];
      if (dinp)
        dinp[r * C + i] +=
            static_cast<float>(rstd[r] * (static_cast<double>(dy[i]) * weight[i] - s1 / C - xh * s2 / C));
    }
  }
}

}  // namespace ct::kernels

// Layer norm over rows of C: rows in parallel for the forward and dinp; dweight/dbias by column blocks
// walking rows in order, so their sums are identical for any thread count. The post-LN block's dropout and
// residual ride on the same row loops.
#include "kernels/layernorm.h"

#include <cmath>

#include "core/error.h"
#include "kernels/philox_lanes.h"

namespace ct::kernels {

namespace {

// One row of the forward: statistics, the normalized row (and its bf16 copy), mean and rstd.
inline void forward_row(float* o, bf16* ob, float& mean, float& rstd, const float* x, const float* weight,
                        const float* bias, int64_t C, float eps) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < C; ++i) s += x[i];
  const float m = s / C;
  float v = 0.0f;
#pragma omp simd reduction(+ : v)
  for (int64_t i = 0; i < C; ++i) v += (x[i] - m) * (x[i] - m);
  const float rs = 1.0f / std::sqrt(v / C + eps);
  if (bias) {
#pragma omp simd
    for (int64_t i = 0; i < C; ++i) o[i] = (x[i] - m) * rs * weight[i] + bias[i];
  } else {  // LayerNorm(bias=False) (ModernBERT)
#pragma omp simd
    for (int64_t i = 0; i < C; ++i) o[i] = (x[i] - m) * rs * weight[i];
  }
  if (ob)
    for (int64_t i = 0; i < C; ++i) ob[i] = to_bf16(o[i]);
  mean = m;
  rstd = rs;
}

// One row of the input gradient: dx = rs * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = dy * w.
inline void backward_row(float* dx, const float* dy, const float* x, const float* weight, float m, float rs,
                         int64_t C, bool accumulate) {
  float s1 = 0.0f, s2 = 0.0f;
#pragma omp simd reduction(+ : s1, s2)
  for (int64_t i = 0; i < C; ++i) {
    const float dxh = dy[i] * weight[i];
    s1 += dxh;
    s2 += dxh * (x[i] - m) * rs;
  }
  s1 /= C;
  s2 /= C;
  if (accumulate) {
#pragma omp simd
    for (int64_t i = 0; i < C; ++i) dx[i] += rs * (dy[i] * weight[i] - s1 - (x[i] - m) * rs * s2);
  } else {
#pragma omp simd
    for (int64_t i = 0; i < C; ++i) dx[i] = rs * (dy[i] * weight[i] - s1 - (x[i] - m) * rs * s2);
  }
}

// dweight/dbias by column blocks walking rows in order: the same sums for any thread count.
void param_grads(float* dweight, float* dbias, const float* dout, const float* inp, const float* mean,
                 const float* rstd, int64_t N, int64_t C) {
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

// fn(j, scale) for every column j of row r: scale is the dropout factor (0 or 1 / (1 - p)) of element
// row_pos[r] * C + j of the site, 1 when p = 0.
template <class Fn>
inline void row_dropout(const DropoutSite& site, const int64_t* row_pos, int64_t r, int64_t C, Fn&& fn) {
  if (site.p == 0.0f) {
#pragma omp simd
    for (int64_t j = 0; j < C; ++j) fn(j, 1.0f);
    return;
  }
  const int64_t base = (row_pos ? row_pos[r] : r) * C;
  const DropoutSite rs = resolve_row(site, base);
  for_each_dropout(rs.seed, rs.stream, rs.offset, rs.p, base, base + C,
                   [&](int64_t i, float scale) { fn(i - base, scale); });
}

}  // namespace

void layernorm_forward(float* out, bf16* out_bf16, float* mean, float* rstd, const float* inp,
                       const float* weight, const float* bias, int64_t N, int64_t C, float eps) {
#pragma omp parallel for schedule(static) if (N * C > 16384)
  for (int64_t r = 0; r < N; ++r)
    forward_row(out + r * C, out_bf16 ? out_bf16 + r * C : nullptr, mean[r], rstd[r], inp + r * C, weight,
                bias, C, eps);
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int64_t N, int64_t C,
                        bool accumulate_dinp) {
  if (dinp) {
#pragma omp parallel for schedule(static) if (N * C > 16384)
    for (int64_t r = 0; r < N; ++r)
      backward_row(dinp + r * C, dout + r * C, inp + r * C, weight, mean[r], rstd[r], C, accumulate_dinp);
  }
  if (dweight || dbias) param_grads(dweight, dbias, dout, inp, mean, rstd, N, C);
}

void dropout_residual_layernorm_forward(float* res, float* out, bf16* out_bf16, float* mean, float* rstd,
                                        const float* inp, const float* residual, const float* weight,
                                        const float* bias, int64_t N, int64_t C, float eps,
                                        const DropoutSite& site, const int64_t* row_pos) {
  CT_CHECK(site.p >= 0.0f && site.p < 1.0f, "dropout: probability must be in [0, 1), got ", site.p);
  CT_CHECK(!site.row_streams || (site.row_elems > 0 && site.row_elems % C == 0),
           "dropout_residual_layernorm: row streams need row_elems a positive multiple of ", C, ", got ",
           site.row_elems);
#pragma omp parallel for schedule(static) if (N * C > 16384)
  for (int64_t r = 0; r < N; ++r) {
    float* x = res + r * C;
    const float* a = inp + r * C;
    const float* b = residual + r * C;
    // The product is stored before the add, as dropout_forward then an add round it (no fused multiply-add).
    row_dropout(site, row_pos, r, C, [&](int64_t j, float s) { x[j] = a[j] * s; });
#pragma omp simd
    for (int64_t j = 0; j < C; ++j) x[j] = x[j] + b[j];
    forward_row(out + r * C, out_bf16 ? out_bf16 + r * C : nullptr, mean[r], rstd[r], x, weight, bias, C,
                eps);
  }
}

void dropout_residual_layernorm_backward(float* dres, float* dinp, bf16* dinp_bf16, float* dweight,
                                         float* dbias, const float* dout, const float* res,
                                         const float* weight, const float* mean, const float* rstd, int64_t N,
                                         int64_t C, const DropoutSite& site, const int64_t* row_pos) {
  CT_CHECK(site.p >= 0.0f && site.p < 1.0f, "dropout: probability must be in [0, 1), got ", site.p);
  CT_CHECK(!site.row_streams || (site.row_elems > 0 && site.row_elems % C == 0),
           "dropout_residual_layernorm: row streams need row_elems a positive multiple of ", C, ", got ",
           site.row_elems);
  // First, while dout is intact: dres may overwrite it.
  if (dweight || dbias) param_grads(dweight, dbias, dout, res, mean, rstd, N, C);
#pragma omp parallel for schedule(static) if (N * C > 16384)
  for (int64_t r = 0; r < N; ++r) {
    float* g = dres + r * C;
    backward_row(g, dout + r * C, res + r * C, weight, mean[r], rstd[r], C, /*accumulate=*/false);
    float* d = dinp + r * C;
    row_dropout(site, row_pos, r, C, [&](int64_t j, float s) { d[j] = g[j] * s; });
    if (dinp_bf16) {
      bf16* db = dinp_bf16 + r * C;
      for (int64_t j = 0; j < C; ++j) db[j] = to_bf16(d[j]);
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

#include "model/model_ops.h"

#include <algorithm>
#include <cstring>

#include "kernels/gemm.h"
#include "kernels/linear.h"

namespace ct::model {

void add_into(float* out, const float* a, const float* b, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void copy_f32(float* dst, const float* src, int64_t n) {
  if (dst != src) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void zero_f32(float* p, int64_t n) {
  std::memset(p, 0, static_cast<size_t>(n) * sizeof(float));
}

void to_bf16(bf16* dst, const float* src, int64_t n) {
  constexpr int64_t kChunk = 1 << 16;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t b = c * kChunk, e = std::min(n, b + kChunk);
    f32_to_bf16(src + b, dst + b, e - b);
  }
}

void apply_dropout(float* out, bf16* out_b, const float* inp, int64_t n, const kernels::DropoutSite& site) {
  if (site.p > 0.0f) {
    kernels::dropout_forward(out, out_b, inp, n, site);
    return;
  }
  copy_f32(out, inp, n);
  if (out_b) to_bf16(out_b, out, n);
}

void padded_row_positions(std::vector<int64_t>& rows, const std::vector<int64_t>& cu, int64_t T) {
  rows.clear();
  for (size_t b = 0; b + 1 < cu.size(); ++b)
    for (int64_t i = cu[b]; i < cu[b + 1]; ++i) rows.push_back(static_cast<int64_t>(b) * T + i - cu[b]);
}

void apply_dropout_rows(float* out, bf16* out_b, const float* inp, int64_t N, int64_t width, int64_t T,
                        const std::vector<int64_t>& cu, const kernels::DropoutSite& site) {
  if (cu.empty() || site.p == 0.0f) {
    apply_dropout(out, out_b, inp, N * width, site);
    return;
  }
  const int64_t B = static_cast<int64_t>(cu.size()) - 1;
  for (int64_t b = 0; b < B; ++b) {
    kernels::DropoutSite s = site;
    if (site.row_streams) {
      s.stream = site.row_streams[b];
      s.row_streams = nullptr;
      s.row_elems = 0;
    } else {
      s.offset += static_cast<uint64_t>(b * T * width);
    }
    const int64_t o = cu[b] * width;
    apply_dropout(out + o, out_b ? out_b + o : nullptr, inp + o, (cu[b + 1] - cu[b]) * width, s);
  }
}

void linear_backward_input(float* dinp, const void* dout_mm, const void* weight, int64_t BT, int64_t C,
                           int64_t OC, DType mm) {
  kernels::Gemm g;
  g.M = BT;
  g.N = C;
  g.K = OC;
  g.a_type = g.b_type = mm;
  kernels::gemm(g, dout_mm, weight, dinp);
}

void linear_backward_params(float* dweight, float* dbias, const float* dout_f32, const void* dout_mm,
                            const void* inp, int64_t BT, int64_t C, int64_t OC, DType mm, bool accumulate) {
  kernels::Gemm g;
  g.M = OC;
  g.N = C;
  g.K = BT;
  g.trans_a = true;
  g.a_type = g.b_type = mm;
  g.accumulate = accumulate;
  kernels::gemm(g, dout_mm, inp, dweight);
  if (dbias) kernels::bias_backward(dbias, dout_f32, BT, OC);
}

}  // namespace ct::model

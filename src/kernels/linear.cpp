// Linear forward/backward as three gemm descriptors (weights stay [out, in]; transposes are layout flags).
#include "kernels/linear.h"

#include "kernels/gemm.h"

namespace ct::kernels {

namespace {

Gemm forward_gemm(DType out_type, const float* bias, int64_t BT, int64_t C, int64_t OC, DType mm) {
  Gemm g;
  g.M = BT;
  g.N = OC;
  g.K = C;
  g.trans_b = true;
  g.a_type = g.b_type = mm;
  g.c_type = out_type;
  g.bias = bias;
  return g;
}

}  // namespace

void linear_forward(void* out, DType out_type, const void* inp, const void* weight, const float* bias,
                    int64_t BT, int64_t C, int64_t OC, DType mm) {
  gemm(forward_gemm(out_type, bias, BT, C, OC, mm), inp, weight, out);
}

void linear_act_forward(void* out, DType out_type, const void* inp, const void* weight, const float* bias,
                        int64_t BT, int64_t C, int64_t OC, DType mm, Activation act) {
  Gemm g = forward_gemm(out_type, bias, BT, C, OC, mm);
  g.has_activation = true;
  g.activation = act;
  gemm(g, inp, weight, out);
}

void linear_residual_forward(float* out, const void* inp, const void* weight, const float* bias,
                             const float* residual, int64_t BT, int64_t C, int64_t OC, DType mm) {
  Gemm g = forward_gemm(DType::f32, bias, BT, C, OC, mm);
  g.residual = residual;
  gemm(g, inp, weight, out);
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout_f32, const void* dout_mm,
                     const void* inp, const void* weight, int64_t BT, int64_t C, int64_t OC, DType mm) {
  if (dinp) {
    Gemm g;  // dinp[BT, C] += dout[BT, OC] * W[OC, C]
    g.M = BT;
    g.N = C;
    g.K = OC;
    g.a_type = g.b_type = mm;
    g.accumulate = true;
    gemm(g, dout_mm, weight, dinp);
  }
  if (dweight) {
    Gemm g;  // dW[OC, C] += dout^T[OC, BT] * inp[BT, C]
    g.M = OC;
    g.N = C;
    g.K = BT;
    g.trans_a = true;
    g.a_type = g.b_type = mm;
    g.accumulate = true;
    gemm(g, dout_mm, inp, dweight);
  }
  if (dbias) bias_backward(dbias, dout_f32, BT, OC);
}

void bias_backward(float* dbias, const float* dout, int64_t BT, int64_t OC) {
  // Each column sums its rows in order whatever the column split, so results do not depend on thread count;
  // wide blocks keep the row reads long and contiguous.
  constexpr int64_t kCols = 512;
  const int64_t nblocks = (OC + kCols - 1) / kCols;
#pragma omp parallel for schedule(static) if (BT * OC > 16384)
  for (int64_t blk = 0; blk < nblocks; ++blk) {
    const int64_t c0 = blk * kCols, c1 = c0 + kCols < OC ? c0 + kCols : OC;
    float acc[kCols] = {};
    for (int64_t r = 0; r < BT; ++r) {
      const float* d = dout + r * OC;
#pragma omp simd
      for (int64_t c = c0; c < c1; ++c) acc[c - c0] += d[c];
    }
    for (int64_t c = c0; c < c1; ++c) dbias[c] += acc[c - c0];
  }
}

}  // namespace ct::kernels

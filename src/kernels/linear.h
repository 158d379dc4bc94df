// A Linear layer (y = x W^T + b, W stored [out, in] as in HF) forward and backward on top of gemm, plus the
// bias gradient reduction. Matmul operands may be bf16 (autocast): the caller passes bf16 copies of x, W and
// dy then, while bias, dbias and all gradients stay f32.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "kernels/activation.h"

namespace ct::kernels {

// out[BT, OC] = inp[BT, C] * weight[OC, C]^T + bias[OC]  (OVERWRITES out; bias may be null).
// inp and weight are of type `mm` (f32 or bf16); out is of type out_type.
void linear_forward(void* out, DType out_type, const void* inp, const void* weight, const float* bias,
                    int64_t BT, int64_t C, int64_t OC, DType mm);

// out = act(inp * weight^T + bias) in one pass over out (a oneDNN post-op): inference, where the
// pre-activation is not kept for a backward. Same operand and output types as linear_forward.
void linear_act_forward(void* out, DType out_type, const void* inp, const void* weight, const float* bias,
                        int64_t BT, int64_t C, int64_t OC, DType mm, Activation act);

// out[BT, OC] (f32) = inp * weight^T + bias + residual[BT, OC] in one pass over out (a oneDNN post-op): a
// Linear and the residual connection after it when no dropout sits between them. residual may not alias out.
void linear_residual_forward(float* out, const void* inp, const void* weight, const float* bias,
                             const float* residual, int64_t BT, int64_t C, int64_t OC, DType mm);

// Backward, every output ADDED into (+=); any of dinp / dweight / dbias may be null to skip it.
//   dinp[BT, C]    += dout[BT, OC] * weight[OC, C]
//   dweight[OC, C] += dout^T * inp
//   dbias[OC]      += column sums of dout_f32
// dout_mm, inp, weight are of type `mm` (dout_mm == dout_f32 when mm is f32); dout_f32 is only read for
// dbias.
void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout_f32, const void* dout_mm,
                     const void* inp, const void* weight, int64_t BT, int64_t C, int64_t OC, DType mm);

// dbias[OC] += sum over rows of dout[BT, OC]; deterministic (fixed order per column, any thread count).
void bias_backward(float* dbias, const float* dout, int64_t BT, int64_t OC);

}  // namespace ct::kernels

// RMSNorm over the last dimension (decoders' pre-norm blocks, Qwen3's and Gemma 3's per-head q/k norms):
// out = x * rsqrt(mean(x^2) + eps) * w, in f32 as transformers computes it (the variance and the normalized
// row in f32), Llama-style; Gemma's stores w zero-centred and multiplies by (1 + w) (`unit_offset`). Forward
// saves rstd per row so backward needs no recomputation, and can write a bf16 copy of its output for the next
// bf16 matmul.
#pragma once

#include <cstdint>

#include "core/bf16.h"

namespace ct::kernels {

struct RmsNormSpec {
  float eps = 1e-6f;
  bool unit_offset = false;  // Gemma: the scale is 1 + w
};

// out[N, C] (OVERWRITTEN; may alias inp), rstd[N], and out_bf16[N, C] when not null.
void rmsnorm_forward(float* out, bf16* out_bf16, float* rstd, const float* inp, const float* weight,
                     int64_t N, int64_t C, const RmsNormSpec& spec);

// ADDS (+=) into dinp[N, C] (must not alias dout) and dweight[C] (null: a frozen weight). `inp` is the
// forward input, rstd what forward saved. dweight sums rows in fixed blocks, in the same order for any
// thread count.
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                      const float* rstd, int64_t N, int64_t C, const RmsNormSpec& spec);

// Double-precision loops of both directions, for the tests (same contracts).
void rmsnorm_forward_reference(float* out, const float* inp, const float* weight, int64_t N, int64_t C,
                               const RmsNormSpec& spec);
void rmsnorm_backward_reference(float* dinp, float* dweight, const float* dout, const float* inp,
                                const float* weight, int64_t N, int64_t C, const RmsNormSpec& spec);

}  // namespace ct::kernels

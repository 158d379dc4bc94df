// Layer normalization over the last dimension (BERT's post-LN blocks): forward saves mean and rstd per row so
// backward needs no recomputation. Always f32 math; forward can also write a bf16 copy of its output for the
// next bf16 matmul (saves a separate conversion pass).
#pragma once

#include <cstdint>

#include "core/bf16.h"

namespace ct::kernels {

// out[N, C] = (inp - mean) * rstd * weight + bias per row; writes (OVERWRITES) out, mean[N], rstd[N], and
// out_bf16[N, C] when it is not null. eps is config.layer_norm_eps (1e-12 for BERT). out may alias inp. bias
// may be null (no bias: ModernBERT's norms).
void layernorm_forward(float* out, bf16* out_bf16, float* mean, float* rstd, const float* inp,
                       const float* weight, const float* bias, int64_t N, int64_t C, float eps);

// ADDS (+=) into dinp[N, C], dweight[C], dbias[C]. `inp` is the forward input (not the output), mean/rstd
// what forward saved. dweight/dbias accumulate deterministically (fixed reduction order for any thread
// count). dinp must not alias dout. dbias may be null (a norm without bias).
// accumulate_dinp = false OVERWRITES dinp instead (dweight/dbias still accumulate).
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int64_t N, int64_t C,
                        bool accumulate_dinp = true);

// Scalar references (double accumulation) for the tests.
void layernorm_forward_reference(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                 const float* bias, int64_t N, int64_t C, float eps);
void layernorm_backward_reference(float* dinp, float* dweight, float* dbias, const float* dout,
                                  const float* inp, const float* weight, const float* mean, const float* rstd,
                                  int64_t N, int64_t C);

}  // namespace ct::kernels

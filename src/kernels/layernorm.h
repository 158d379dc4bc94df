// Layer normalization over the last dimension (BERT's post-LN blocks): forward saves mean and rstd per row so
// backward needs no recomputation. Always f32 math; forward can also write a bf16 copy of its output for the
// next bf16 matmul (saves a separate conversion pass).
#pragma once

#include <cstdint>

#include "core/bf16.h"
#include "kernels/dropout.h"

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

// A post-LN block's tail in one pass over the rows: res = dropout(inp) + residual, out = LayerNorm(res), as
// dropout_forward, an add and layernorm_forward would compute them (the same masks and roundings) but with
// one parallel region and the rows still in cache. Writes res[N, C] (the LN input backward needs), out,
// out_bf16 (when not null), mean, rstd. Row r's dropout counters are those of element row_pos[r] * C + j of
// one call over [rows, C] (row_pos null: r itself), so a packed batch draws its padded layout's masks.
void dropout_residual_layernorm_forward(float* res, float* out, bf16* out_bf16, float* mean, float* rstd,
                                        const float* inp, const float* residual, const float* weight,
                                        const float* bias, int64_t N, int64_t C, float eps,
                                        const DropoutSite& site, const int64_t* row_pos = nullptr);

// Its backward: dres = LayerNorm backward of dout (OVERWRITTEN: the residual input's gradient), dinp =
// dropout(dres) with the forward's masks (OVERWRITTEN), dinp_bf16 its bf16 copy when not null; ADDS into
// dweight and dbias as layernorm_backward does. dres may alias dout (the model's one gradient buffer).
void dropout_residual_layernorm_backward(float* dres, float* dinp, bf16* dinp_bf16, float* dweight,
                                         float* dbias, const float* dout, const float* res,
                                         const float* weight, const float* mean, const float* rstd, int64_t N,
                                         int64_t C, const DropoutSite& site,
                                         const int64_t* row_pos = nullptr);

// Scalar references (double accumulation) for the tests.
void layernorm_forward_reference(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                 const float* bias, int64_t N, int64_t C, float eps);
void layernorm_backward_reference(float* dinp, float* dweight, float* dbias, const float* dout,
                                  const float* inp, const float* weight, const float* mean, const float* rstd,
                                  int64_t N, int64_t C);

}  // namespace ct::kernels

// Optimizers over the flat f32 parameter slab: AdamW exactly as torch.optim.AdamW (decoupled weight decay
// p -= lr*wd*p first, bias-corrected moments, eps added after sqrt of the bias-corrected second moment) and
// SGD as torch.optim.SGD (momentum, dampening 0, no nesterov, L2 weight decay added to the gradient). State
// is plain slabs the size of the parameter slab plus one step counter, so a checkpoint writes them as arrays.
// Updates are bit-identical to torch 1.13's single-tensor CPU implementations (same float operations, same
// fused multiply-adds). Weight decay is switched per slab range (HF's no-decay rule for biases and LayerNorm
// weights).
#pragma once

#include <cstdint>
#include <vector>

#include "core/bf16.h"
#include "kernels/row_flags.h"

namespace ct::kernels {

// A contiguous run of the slab and whether weight decay applies to it (from model::ParamInfo.decay).
struct SlabRange {
  int64_t offset = 0;
  int64_t numel = 0;
  bool decay = true;
};

struct AdamWHyper {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
};

// One AdamW update over n elements; `step` is the 1-based count INCLUDING this update (torch increments
// first). Updates param, exp_avg, exp_avg_sq in place. decay=false skips the weight decay term. param_bf16,
// when not null, receives bf16(param) in the same pass: the bf16 path's weight copies, refreshed without a
// second pass over the slab. Each gradient is read as grad[i] * grad_scale (a float product): clipping's
// coefficient (kernels::clip_coefficient) applied in this pass instead of a pass of its own, same bits.
void adamw_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n,
                  const AdamWHyper& h, int64_t step, bool decay, bf16* param_bf16 = nullptr,
                  float grad_scale = 1.0f);

// adamw_update over every range of the slab (ranges index param/grad/exp_avg/exp_avg_sq/param_bf16 alike).
// `touched`: rows of one tensor that ever had a gradient; every other row of it must have a zero (+0.0)
// gradient and moments that are still exactly +0.0. For such a row AdamW's update term is
// -lr/bc1 * 0 / (sqrt(0)/sqrt(bc2) + eps) = -0 and the moments stay +0, so it gets the weight decay alone,
// computed as adamw_update computes it (same bits), and its moments and gradient are not read. Without decay
// the row is not visited at all, so its bf16 copy keeps what it held (the word embeddings' copies, which no
// matmul reads unless a tied decoder makes every row touched). grad_scale must be finite (a NaN clipping
// coefficient poisons every row: scale in place and take every row as touched instead).
void adamw_step(float* param, const float* grad, float* exp_avg, float* exp_avg_sq,
                const std::vector<SlabRange>& ranges, const AdamWHyper& h, int64_t step,
                bf16* param_bf16 = nullptr, const RowFlags& touched = {}, float grad_scale = 1.0f);

struct SgdHyper {
  double lr = 1e-3, momentum = 0.0, weight_decay = 0.0;
};

// One SGD update over n elements; `step` is 1-based including this update (step 1 initializes the momentum
// buffer to the gradient, as torch does when the buffer is None). momentum_buf may be null when momentum ==
// 0.
void sgd_update(float* param, const float* grad, float* momentum_buf, int64_t n, const SgdHyper& h,
                int64_t step, bool decay, bf16* param_bf16 = nullptr);
void sgd_step(float* param, const float* grad, float* momentum_buf, const std::vector<SlabRange>& ranges,
              const SgdHyper& h, int64_t step, bf16* param_bf16 = nullptr);

// Scalar references (double math) for the tests.
void adamw_update_reference(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n,
                            const AdamWHyper& h, int64_t step, bool decay);
void sgd_update_reference(float* param, const float* grad, float* momentum_buf, int64_t n, const SgdHyper& h,
                          int64_t step, bool decay);

}  // namespace ct::kernels

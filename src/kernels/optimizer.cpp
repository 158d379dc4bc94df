// AdamW and SGD with torch's exact update order, vectorized and OpenMP-parallel over the slab.
#include "kernels/optimizer.h"

#include <cmath>

#include "core/error.h"

namespace ct::kernels {

namespace {

// The bf16 copy as a separate instantiation, so the plain loop keeps no per-element test.
template <bool kCopy>
void adamw_loop(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n,
                float decay_mul, float b1, float b2, float one_b1, float one_b2, float neg_step_size,
                float bc2_sqrt, float eps, bf16* param_bf16, float grad_scale) {
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i] * grad_scale;  // x * 1.0f is x, NaN and infinities included
    const float p = param[i] * decay_mul;
    // torch's add_(alpha=) and addcmul_ are fused multiply-adds on CPU; the rest is unfused.
    const float m = std::fma(g, one_b1, exp_avg[i] * b1);
    const float v = std::fma(one_b2 * g, g, exp_avg_sq[i] * b2);
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    const float denom = std::sqrt(v) / bc2_sqrt + eps;
    const float out = p + neg_step_size * m / denom;
    param[i] = out;
    if constexpr (kCopy) param_bf16[i].bits = f32_to_bf16_bits(out);
  }
}

float decay_multiplier(const AdamWHyper& h) {
  return static_cast<float>(1.0 - h.lr * h.weight_decay);
}

// adamw_update of a row whose gradient and moments are +0: p = param * decay_mul, then p + (-0) = p.
void decay_only(float* param, int64_t n, float decay_mul, bf16* param_bf16) {
  if (decay_mul == 1.0f) return;  // param * 1 is param: nothing changes, the bf16 copy included
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    const float p = param[i] * decay_mul;
    param[i] = p;
    if (param_bf16) param_bf16[i].bits = f32_to_bf16_bits(p);
  }
}

}  // namespace

void adamw_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n,
                  const AdamWHyper& h, int64_t step, bool decay, bf16* param_bf16, float grad_scale) {
  CT_CHECK(step >= 1, "adamw: step must be >= 1, got ", step);
  const float decay_mul = decay ? decay_multiplier(h) : 1.0f;
  const float b1 = static_cast<float>(h.beta1), b2 = static_cast<float>(h.beta2);
  const float one_b1 = static_cast<float>(1.0 - h.beta1), one_b2 = static_cast<float>(1.0 - h.beta2);
  const double bc1 = 1.0 - std::pow(h.beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(h.beta2, static_cast<double>(step));
  // Same operations in the same order as torch's single-tensor AdamW, so results agree to the last bit or so.
  const float neg_step_size = static_cast<float>(-(h.lr / bc1));
  const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  const float eps = static_cast<float>(h.eps);
  if (param_bf16)
    adamw_loop<true>(param, grad, exp_avg, exp_avg_sq, n, decay_mul, b1, b2, one_b1, one_b2, neg_step_size,
                     bc2_sqrt, eps, param_bf16, grad_scale);
  else
    adamw_loop<false>(param, grad, exp_avg, exp_avg_sq, n, decay_mul, b1, b2, one_b1, one_b2, neg_step_size,
                      bc2_sqrt, eps, nullptr, grad_scale);
}

namespace {

// Calls fn(offset, numel, decay) over maximal runs of adjacent ranges with the same decay flag, so a slab of
// a few hundred tensors costs a few parallel loops, not hundreds.
template <class Fn>
void for_each_run(const std::vector<SlabRange>& ranges, Fn&& fn) {
  size_t i = 0;
  while (i < ranges.size()) {
    const int64_t begin = ranges[i].offset;
    int64_t end = begin + ranges[i].numel;
    const bool decay = ranges[i].decay;
    size_t j = i + 1;
    while (j < ranges.size() && ranges[j].decay == decay && ranges[j].offset == end) end += ranges[j++].numel;
    fn(begin, end - begin, decay);
    i = j;
  }
}

}  // namespace

void adamw_step(float* param, const float* grad, float* exp_avg, float* exp_avg_sq,
                const std::vector<SlabRange>& ranges, const AdamWHyper& h, int64_t step, bf16* param_bf16,
                const RowFlags& touched, float grad_scale) {
  CT_CHECK(step >= 1, "adamw: step must be >= 1, got ", step);
  CT_CHECK(std::isfinite(grad_scale), "adamw: gradient scale must be finite, got ", grad_scale);
  for_each_run(ranges, [&](int64_t off, int64_t n, bool decay) {
    for_each_flag_run(touched, off, off + n, [&](int64_t b, int64_t e, bool flagged) {
      if (flagged)
        adamw_update(param + b, grad + b, exp_avg + b, exp_avg_sq + b, e - b, h, step, decay,
                     param_bf16 ? param_bf16 + b : nullptr, grad_scale);
      else
        decay_only(param + b, e - b, decay ? decay_multiplier(h) : 1.0f,
                   param_bf16 ? param_bf16 + b : nullptr);
    });
  });
}

void sgd_update(float* param, const float* grad, float* momentum_buf, int64_t n, const SgdHyper& h,
                int64_t step, bool decay, bf16* param_bf16) {
  CT_CHECK(step >= 1, "sgd: step must be >= 1, got ", step);
  CT_CHECK(h.momentum == 0.0 || momentum_buf, "sgd: momentum ", h.momentum, " needs a momentum buffer");
  const float wd = decay ? static_cast<float>(h.weight_decay) : 0.0f;
  const float lr = static_cast<float>(h.lr), mom = static_cast<float>(h.momentum);
  if (mom == 0.0f) {
#pragma omp parallel for simd schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; ++i) param[i] = std::fma(std::fma(param[i], wd, grad[i]), -lr, param[i]);
    if (param_bf16) f32_to_bf16(param, param_bf16, n);
    return;
  }
  const bool first = step == 1;
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    // torch: d = grad.add(param, alpha=wd); buf = buf * momentum + d; param.add_(buf, alpha=-lr), fused like
    // its CPU kernels.
    const float d = std::fma(param[i], wd, grad[i]);
    const float buf = first ? d : momentum_buf[i] * mom + d;
    momentum_buf[i] = buf;
    param[i] = std::fma(buf, -lr, param[i]);
  }
  if (param_bf16) f32_to_bf16(param, param_bf16, n);  // SGD is not the hot path: a second pass is fine
}

void sgd_step(float* param, const float* grad, float* momentum_buf, const std::vector<SlabRange>& ranges,
              const SgdHyper& h, int64_t step, bf16* param_bf16) {
  for_each_run(ranges, [&](int64_t off, int64_t n, bool decay) {
    sgd_update(param + off, grad + off, momentum_buf ? momentum_buf + off : nullptr, n, h, step, decay,
               param_bf16 ? param_bf16 + off : nullptr);
  });
}

void adamw_update_reference(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n,
                            const AdamWHyper& h, int64_t step, bool decay) {
  for (int64_t i = 0; i < n; ++i) {
    double p = param[i];
    if (decay) p *= 1.0 - h.lr * h.weight_decay;
    const double m = h.beta1 * exp_avg[i] + (1.0 - h.beta1) * grad[i];
    const double v = h.beta2 * exp_avg_sq[i] + (1.0 - h.beta2) * grad[i] * grad[i];
    const double bc1 = 1.0 - std::pow(h.beta1, step), bc2 = 1.0 - std::pow(h.beta2, step);
    p -= (h.lr / bc1) * m / (std::sqrt(v) / std::sqrt(bc2) + h.eps);
    param[i] = static_cast<float>(p);
    exp_avg[i] = static_cast<float>(m);
    exp_avg_sq[i] = static_cast<float>(v);
  }
}

void sgd_update_reference(float* param, const float* grad, float* momentum_buf, int64_t n, const SgdHyper& h,
                          int64_t step, bool decay) {
  for (int64_t i = 0; i < n; ++i) {
    double d = grad[i];
    if (decay) d += h.weight_decay * param[i];
    if (h.momentum != 0.0) {
      d = step == 1 ? d : h.momentum * momentum_buf[i] + d;
      momentum_buf[i] = static_cast<float>(d);
    }
    param[i] = static_cast<float>(param[i] - h.lr * d);
  }
}

}  // namespace ct::kernels

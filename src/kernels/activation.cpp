// GELU (exact and tanh), ReLU, tanh and SiLU (decoders' SwiGLU gate), vectorized through vec_math's exp/erf.
#include "kernels/activation.h"

#include <cmath>

#include "core/error.h"
#include "kernels/vec_math.h"

namespace ct::kernels {
namespace {

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;  // 1/sqrt(2*pi)
constexpr float kSqrt2OverPi = 0.79788456080286536f;
constexpr float kTanhCoef = 0.044715f;

}  // namespace

Activation activation_from_name(const std::string& name) {
  if (name == "gelu") return Activation::gelu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::gelu_tanh;
  if (name == "relu") return Activation::relu;
  if (name == "silu" || name == "swish") return Activation::silu;
  fail("hidden_act: unsupported activation '", name,
       "' (expected gelu, gelu_new, gelu_pytorch_tanh, relu or silu)");
}

namespace {

template <Activation A>
inline float act_of(float x) {
  if constexpr (A == Activation::gelu) {
    return 0.5f * x * fast_erfc(-x * kInvSqrt2);
  } else if constexpr (A == Activation::gelu_tanh) {
    return 0.5f * x * (1.0f + fast_tanh(kSqrt2OverPi * (x + kTanhCoef * x * x * x)));
  } else if constexpr (A == Activation::relu) {
    return x > 0.0f ? x : 0.0f;
  } else if constexpr (A == Activation::silu) {
    return x / (1.0f + fast_exp(-x));  // torch's CPU silu: x / (1 + exp(-x))
  } else {
    return std::tanh(x);  // fast_tanh loses relative precision near 0, where pooled features sit
  }
}

inline float load_in(const float* p, int64_t i) {
  return p[i];
}
inline float load_in(const bf16* p, int64_t i) {
  return bf16_bits_to_f32(p[i].bits);
}

template <Activation A, class TIn>
void forward_loop(float* out, bf16* out_bf16, const TIn* inp, int64_t n) {
  if (out) {
#pragma omp parallel for simd schedule(static) if (n > 16384)
    for (int64_t i = 0; i < n; ++i) out[i] = act_of<A>(load_in(inp, i));
    if (out_bf16) f32_to_bf16(out, out_bf16, n);
    return;
  }
  // bf16 only (the bf16 path's next matmul operand): through a chunk that stays in L1, so the f32 result is
  // never written to memory and read back.
  constexpr int64_t kChunk = 2048;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (n > 16384)
  for (int64_t c = 0; c < chunks; ++c) {
    alignas(64) float tmp[kChunk];
    const int64_t b = c * kChunk, len = std::min(kChunk, n - b);
#pragma omp simd
    for (int64_t i = 0; i < len; ++i) tmp[i] = act_of<A>(load_in(inp, b + i));
    f32_to_bf16(tmp, out_bf16 + b, len);
  }
}

template <class TIn>
void forward_impl(float* out, bf16* out_bf16, const TIn* inp, int64_t n, Activation act) {
  CT_CHECK(out || out_bf16, "activation_forward: no output");
  switch (act) {
    case Activation::gelu:
      forward_loop<Activation::gelu>(out, out_bf16, inp, n);
      break;
    case Activation::gelu_tanh:
      forward_loop<Activation::gelu_tanh>(out, out_bf16, inp, n);
      break;
    case Activation::relu:
      forward_loop<Activation::relu>(out, out_bf16, inp, n);
      break;
    case Activation::tanh:
      forward_loop<Activation::tanh>(out, out_bf16, inp, n);
      break;
    case Activation::silu:
      forward_loop<Activation::silu>(out, out_bf16, inp, n);
      break;
  }
}

}  // namespace

void activation_forward(float* out, bf16* out_bf16, const float* inp, int64_t n, Activation act) {
  forward_impl(out, out_bf16, inp, n, act);
}

void activation_forward(float* out, bf16* out_bf16, const bf16* inp, int64_t n, Activation act) {
  forward_impl(out, out_bf16, inp, n, act);
}

namespace {

// One element's gradient. Inlined into each loop below so gcc vectorizes it (a capturing lambda writing
// through dinp kept the loop scalar).
inline float grad_of(float x, float d, Activation act) {
  switch (act) {
    case Activation::gelu: {
      const float cdf = 0.5f * fast_erfc(-x * kInvSqrt2);
      const float pdf = kInvSqrt2Pi * fast_exp(-0.5f * x * x);
      return d * (cdf + x * pdf);
    }
    case Activation::gelu_tanh: {
      const float u = kSqrt2OverPi * (x + kTanhCoef * x * x * x);
      const float t = fast_tanh(u);
      const float du = kSqrt2OverPi * (1.0f + 3.0f * kTanhCoef * x * x);
      return d * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du);
    }
    case Activation::relu:
      return x > 0.0f ? d : 0.0f;
    case Activation::tanh: {
      const float t = std::tanh(x);
      return d * (1.0f - t * t);
    }
    case Activation::silu: {
      const float sg = 1.0f / (1.0f + fast_exp(-x));
      return d * sg * (1.0f + x * (1.0f - sg));
    }
  }
  return 0.0f;
}

// dinp_bf16 (kCopy): the bf16 copy of each result, written in the same pass rather than a second one over
// dinp.
template <bool kAccumulate, bool kCopy, Activation kAct, class TIn>
void backward_loop(float* __restrict dinp, bf16* __restrict dinp_bf16, const float* __restrict dout,
                   const TIn* __restrict inp, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad_of(load_in(inp, i), dout[i], kAct);
    const float r = kAccumulate ? dinp[i] + g : g;
    dinp[i] = r;
    if constexpr (kCopy) dinp_bf16[i].bits = f32_to_bf16_bits(r);
  }
}

template <bool kAccumulate, bool kCopy, class TIn>
void backward_impl(float* dinp, bf16* dinp_bf16, const float* dout, const TIn* inp, int64_t n,
                   Activation act) {
  switch (act) {
    case Activation::gelu:
      backward_loop<kAccumulate, kCopy, Activation::gelu>(dinp, dinp_bf16, dout, inp, n);
      break;
    case Activation::gelu_tanh:
      backward_loop<kAccumulate, kCopy, Activation::gelu_tanh>(dinp, dinp_bf16, dout, inp, n);
      break;
    case Activation::relu:
      backward_loop<kAccumulate, kCopy, Activation::relu>(dinp, dinp_bf16, dout, inp, n);
      break;
    case Activation::tanh:
      backward_loop<kAccumulate, kCopy, Activation::tanh>(dinp, dinp_bf16, dout, inp, n);
      break;
    case Activation::silu:
      backward_loop<kAccumulate, kCopy, Activation::silu>(dinp, dinp_bf16, dout, inp, n);
      break;
  }
}

}  // namespace

namespace {

template <class TIn>
void backward_entry(float* dinp, const float* dout, const TIn* inp, int64_t n, Activation act,
                    bool accumulate, bf16* dinp_bf16) {
  if (accumulate && dinp_bf16)
    backward_impl<true, true>(dinp, dinp_bf16, dout, inp, n, act);
  else if (accumulate)
    backward_impl<true, false>(dinp, nullptr, dout, inp, n, act);
  else if (dinp_bf16)
    backward_impl<false, true>(dinp, dinp_bf16, dout, inp, n, act);
  else
    backward_impl<false, false>(dinp, nullptr, dout, inp, n, act);
}

}  // namespace

void activation_backward(float* dinp, const float* dout, const float* inp, int64_t n, Activation act,
                         bool accumulate, bf16* dinp_bf16) {
  backward_entry(dinp, dout, inp, n, act, accumulate, dinp_bf16);
}

void activation_backward(float* dinp, const float* dout, const bf16* inp, int64_t n, Activation act,
                         bool accumulate, bf16* dinp_bf16) {
  backward_entry(dinp, dout, inp, n, act, accumulate, dinp_bf16);
}

double activation_reference(double x, Activation act) {
  switch (act) {
    case Activation::gelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::gelu_tanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::relu:
      return x > 0.0 ? x : 0.0;
    case Activation::tanh:
      return std::tanh(x);
    case Activation::silu:
      return x / (1.0 + std::exp(-x));
  }
  return 0.0;
}

double activation_grad_reference(double x, Activation act) {
  switch (act) {
    case Activation::gelu:
      return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    case Activation::gelu_tanh: {
      const double c = std::sqrt(2.0 / M_PI);
      const double t = std::tanh(c * (x + 0.044715 * x * x * x));
      return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * x * x);
    }
    case Activation::relu:
      return x > 0.0 ? 1.0 : 0.0;
    case Activation::tanh: {
      const double t = std::tanh(x);
      return 1.0 - t * t;
    }
    case Activation::silu: {
      const double sg = 1.0 / (1.0 + std::exp(-x));
      return sg * (1.0 + x * (1.0 - sg));
    }
  }
  return 0.0;
}

}  // namespace ct::kernels

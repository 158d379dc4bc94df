// Feed-forward activations by HF name: "gelu" (exact, erf), "gelu_new" / "gelu_pytorch_tanh" (tanh
// approximation), "relu"; and tanh, which only heads use (BERT's pooler, RoBERTa's classifier), so no
// config name maps to it. Forward can also write a bf16 copy of its output for the next bf16 matmul.
#pragma once

#include <cstdint>
#include <string>

#include "core/bf16.h"

namespace ct::kernels {

enum class Activation { gelu, gelu_tanh, relu, tanh, silu };

// Maps config.hidden_act ("gelu", "gelu_new", "gelu_pytorch_tanh", "relu") to an Activation;
// throws ct::Error naming the value otherwise.
Activation activation_from_name(const std::string& name);

// out[n] = act(inp[n]) (OVERWRITES out; out may alias inp only if backward does not need inp afterwards);
// out_bf16[n] = bf16(out[n]) when not null. out may be null when out_bf16 is not: bf16 result only, in one
// pass.
void activation_forward(float* out, bf16* out_bf16, const float* inp, int64_t n, Activation act);
// The same on a bf16 input (the bf16 path keeps the FFN's pre-activation in bf16, as autocast does).
void activation_forward(float* out, bf16* out_bf16, const bf16* inp, int64_t n, Activation act);

// dinp[n] += dout[n] * act'(inp[n])  (ADDS; inp is the forward input). dinp must not alias dout.
// accumulate = false OVERWRITES dinp instead (saves zeroing it first); dinp_bf16, when not null, receives a
// bf16 copy of the resulting dinp (the next bf16 matmul's operand).
void activation_backward(float* dinp, const float* dout, const float* inp, int64_t n, Activation act,
                         bool accumulate = true, bf16* dinp_bf16 = nullptr);
// The same with a bf16 forward input.
void activation_backward(float* dinp, const float* dout, const bf16* inp, int64_t n, Activation act,
                         bool accumulate = true, bf16* dinp_bf16 = nullptr);

// Scalar references (double math) for the tests.
double activation_reference(double x, Activation act);
double activation_grad_reference(double x, Activation act);

}  // namespace ct::kernels

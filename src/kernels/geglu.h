// The gated FFN activations: a fused input projection yields [N, 2F], split into the activated half (first F
// columns) and the multiplier (last F), and the output is act(first) * second. ModernBERT's GeGLU
// (transformers' ModernBertMLP `self.act(input) * gate`, GELU on the Hub checkpoints), the decoders' SwiGLU
// (Llama's `act_fn(gate_proj(x)) * up_proj(x)` with gate_proj's rows first and act silu) and Gemma's GeGLU
// (the same with gelu_pytorch_tanh).
#pragma once

#include <cstdint>

#include "kernels/activation.h"

namespace ct::kernels {

// out[n, f] = act(inp[n, f]) * inp[n, F + f]   (OVERWRITES out [N, F]; inp is [N, 2F]).
void geglu_forward(float* out, const float* inp, int64_t N, int64_t F, Activation act);
// dinp[n, f] = dout[n, f] * inp[n, F + f] * act'(inp[n, f]),  dinp[n, F + f] = dout[n, f] * act(inp[n, f])
// (OVERWRITES dinp [N, 2F]; must not alias inp or dout).
void geglu_backward(float* dinp, const float* dout, const float* inp, int64_t N, int64_t F, Activation act);

}  // namespace ct::kernels

// The gated FFN activation of ModernBERT (GeGLU): the FFN's input projection Wi yields [N, 2F], split into
// `input` (first F columns) and `gate` (last F), and the output is act(input) * gate, as transformers'
// ModernBertMLP computes `self.act(input) * gate` (act = config.hidden_activation, GELU for the Hub
// checkpoints).
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

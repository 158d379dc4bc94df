// The causal-LM head and its cross-entropy in one pass over chunks of tokens, so the [tokens, vocab] logits
// (151,936 words for Qwen, 262,144 for Gemma) never exist whole: each chunk's logits = h W^T are made, turned
// into the rows' losses (f32 log-softmax, as transformers' ForCausalLMLoss upcasts them), their argmax and
// entropy, and, for training, into dlogits = (softmax - onehot) * grad_scale, whose products give dh and dW
// before the next chunk reuses the buffer. The caller passes only the labelled rows (after the shift), so no
// logits are computed where no target is.
//
// bf16 (autocast): h and W are bf16 operands, the logits are the bf16 product's rounded values, dlogits is
// rounded to bf16 before its products and dh to bf16 after (the backward of autocast's casts); dW is summed
// over the chunks in f32 and rounded once per call, as torch's one product over all rows rounds its result.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace ct::kernels {

struct LmHeadLossSpec {
  int64_t N = 0;  // rows (labelled tokens)
  int64_t C = 0;  // hidden size
  int64_t V = 0;  // vocabulary rows of W
  DType dt = DType::f32;
  float grad_scale =
      1.0f;                // d loss / d (a row's nll): 1 / num_items_in_batch, times the world size under DDP
  int64_t chunk_rows = 0;  // rows per chunk; 0 = multiples of 64 keeping a chunk's logits near 64 MB
};

struct LmHeadLossSums {
  double nll = 0.0;      // sum over rows of -log softmax(logits)[target]
  int64_t correct = 0;   // rows whose argmax is the target
  double entropy = 0.0;  // sum over rows of the softmax's entropy (TRL's logged `entropy`)
};

// hidden [N, C] and weight [V, C] of type dt; targets [N] in [0, V). dhidden (f32 [N, C]) and dweight (f32
// [V, C]) are ADDED to (+=) when not null: null dhidden and dweight is evaluation. argmax (optional, [N]):
// each row's predicted id (the first maximum, as torch.argmax). A target outside [0, V) is a ct::Error naming
// the row.
LmHeadLossSums lm_head_loss(const void* hidden, const void* weight, const int32_t* targets,
                            const LmHeadLossSpec& spec, float* dhidden, float* dweight,
                            int32_t* argmax = nullptr);

// Double-precision loops over f32 operands, for the tests: the same sums and gradients (no bf16 roundings).
LmHeadLossSums lm_head_loss_reference(const float* hidden, const float* weight, const int32_t* targets,
                                      const LmHeadLossSpec& spec, float* dhidden, float* dweight);

}  // namespace ct::kernels

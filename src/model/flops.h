// Model FLOPs of a QA forward pass, counted on the tokens actually computed: the matmuls (QKV, attention
// output, FFN, the QA head) per token plus each sequence's two attention products over its own length. The
// model-FLOP convention of MFU: a training step costs 3x the forward (backward = 2x). Pads are not counted,
// so the MFU of a padded batch is the utilization on real tokens, the figure that compares with a packed one.
#pragma once

#include <cstdint>
#include <span>

#include "model/config.h"

namespace ct::model {

// lengths: real tokens of each sequence.
double forward_matmul_flops(const ModelConfig& c, std::span<const int64_t> lengths);

// B sequences of T tokens each.
double forward_matmul_flops(const ModelConfig& c, int64_t B, int64_t T);

// The same for another head in place of the QA head: `sequences` sequences, `tokens` real tokens and, for a
// masked LM, `projected` tokens the vocabulary projection runs on (ELECTRA's embedding projection counted).
// Heads that read only some rows (each sequence's first token; a masked LM's projected tokens) count the
// last layer's other rows as not computed, as the BERT-family bodies skip them.
double forward_matmul_flops(const ModelConfig& c, std::span<const int64_t> lengths, HeadKind head,
                            int64_t projected);

}  // namespace ct::model

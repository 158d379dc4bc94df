// DataCollatorForLanguageModeling's masking (run_mlm.py): each non-special token is chosen with probability
// mlm_probability; a chosen token becomes the mask token with probability 0.8, a uniformly drawn token of the
// whole vocabulary (added tokens included, as len(tokenizer)) with probability 0.1 (half of the rest), or
// stays; labels hold the original id where chosen, -100 elsewhere.
//
// HF draws from each rank's torch generator in collation order, so its masks depend on the world size and the
// data order. Here the draws are a pure function of (seed, epoch, the sample's position in the epoch, token
// index), one Philox block per token, so N ranks mask exactly as one rank does, a resumed run masks as an
// uninterrupted one, and every epoch re-draws (dynamic masking). Evaluation uses a fixed epoch key so its
// masks are the same every run.
#pragma once

#include <cstdint>
#include <span>

namespace ct::tasks {

constexpr uint64_t kEvalMaskEpoch = ~uint64_t{0};  // the epoch key of evaluation masks

struct MaskingOptions {
  double mlm_probability = 0.15;
  int32_t mask_token_id = -1;
  int64_t vocab_size = 0;  // len(tokenizer)
  uint64_t seed = 42;
};

// Masks `input_ids` in place and writes `labels` (same length); `special` marks tokens never chosen (special
// tokens and padding). `epoch` and `position` key the draws.
void mask_tokens(std::span<int32_t> input_ids, std::span<const uint8_t> special, std::span<int64_t> labels,
                 const MaskingOptions& options, uint64_t epoch, uint64_t position);

}  // namespace ct::tasks

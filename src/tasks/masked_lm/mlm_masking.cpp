#include "tasks/masked_lm/mlm_masking.h"

#include "core/error.h"
#include "core/rng.h"

namespace ct::tasks {
namespace {

constexpr uint64_t kMaskingSite = 0x6d6c6d00;  // "mlm": keeps these draws apart from dropout's streams

}  // namespace

void mask_tokens(std::span<int32_t> input_ids, std::span<const uint8_t> special, std::span<int64_t> labels,
                 const MaskingOptions& o, uint64_t epoch, uint64_t position) {
  CT_CHECK(input_ids.size() == special.size() && input_ids.size() == labels.size(),
           "mlm masking: ", input_ids.size(), " tokens, ", special.size(), " special-token flags and ",
           labels.size(), " labels (expected one each per token)");
  CT_CHECK(o.mlm_probability >= 0 && o.mlm_probability <= 1, "--mlm_probability ", o.mlm_probability,
           " (expected a probability in [0, 1])");
  CT_CHECK(o.mask_token_id >= 0, "mlm masking: the tokenizer has no mask token (masked LM needs one)");
  CT_CHECK(o.vocab_size > 0, "mlm masking: vocabulary size ", o.vocab_size, " (expected > 0)");
  CT_CHECK(input_ids.size() < (size_t{1} << 20), "mlm masking: a sequence of ", input_ids.size(),
           " tokens (expected fewer than 2^20)");
  const auto p = static_cast<float>(o.mlm_probability);
  for (size_t t = 0; t < input_ids.size(); ++t) {
    // One block of four words per token: chosen?, mask?, random?, which token.
    const auto w = philox4x32(o.seed, kMaskingSite ^ (epoch << 32), (position << 20) | t);
    const bool chosen = !special[t] && u32_to_unit_float(w[0]) < p;
    if (!chosen) {
      labels[t] = -100;
      continue;
    }
    labels[t] = input_ids[t];
    if (u32_to_unit_float(w[1]) < 0.8f) {
      input_ids[t] = o.mask_token_id;
    } else if (u32_to_unit_float(w[2]) < 0.5f) {
      input_ids[t] =
          static_cast<int32_t>((static_cast<uint64_t>(w[3]) * static_cast<uint64_t>(o.vocab_size)) >> 32);
    }
  }
}

}  // namespace ct::tasks

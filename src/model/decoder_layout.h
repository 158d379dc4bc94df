// The parameter slab of a decoder (Llama family and Gemma 3): every tensor by HF name with its offset, in
// forward order (embeddings, layer 0 .. L-1, final norm, untied lm_head), so backward finishes parameters in
// reverse slab order and DDP buckets are contiguous ranges. Within a layer q/k/v_proj sit back to back (then
// their biases) so the fused QKV projection is one product on a [(H + 2 KV) d, h] view, and gate_proj then
// up_proj likewise for the gated MLP ([2 I, h], the activated half first), while names and shapes stay HF's.
#pragma once

#include <cstdint>
#include <vector>

#include "model/decoder_config.h"
#include "model/param_info.h"

namespace ct::model {

// -1 where the family has no such tensor.
struct DecoderLayerOffsets {
  int64_t norm_in = 0;                          // input_layernorm
  int64_t qkv_w = 0, qkv_b = -1;                // q|k|v_proj.weight, [(H + 2 KV) d, h]; their biases
  int64_t q_norm = -1, k_norm = -1;             // self_attn.q_norm / k_norm [d]
  int64_t o_w = 0, o_b = -1;                    // self_attn.o_proj
  int64_t norm_post_attn = 0;                   // post_attention_layernorm
  int64_t norm_pre_ff = -1, norm_post_ff = -1;  // Gemma 3's pre/post_feedforward_layernorm
  int64_t gate_up_w = 0, gate_up_b = -1;        // mlp.gate|up_proj, [2 I, h]
  int64_t down_w = 0, down_b = -1;              // mlp.down_proj
  int64_t begin = 0, end = 0;
};

struct DecoderLayout {
  std::vector<ParamInfo> params;  // slab order
  int64_t embed = 0;              // model.embed_tokens.weight [V, h]
  std::vector<DecoderLayerOffsets> layers;
  int64_t final_norm = 0;  // model.norm.weight
  int64_t lm_head = -1;    // lm_head.weight [V, h]; -1: tied to the embeddings
  int64_t total = 0;       // floats
};

// Throws ct::Error naming the option when the body cannot run the config (GPT-2's Conv1D body, partial
// rotary).
DecoderLayout make_decoder_layout(const DecoderConfig& c);

}  // namespace ct::model

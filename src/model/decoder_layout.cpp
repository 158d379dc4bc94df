#include "model/decoder_layout.h"

#include <string>

#include "core/error.h"

namespace ct::model {

DecoderLayout make_decoder_layout(const DecoderConfig& c) {
  CT_CHECK(c.family != DecoderFamily::gpt2,
           "model_type gpt2: the decoder body does not run GPT-2's Conv1D / LayerNorm layout yet");
  for (const RopeSpec& r : c.ropes)
    CT_CHECK(r.partial_rotary_factor == 1.0, "partial_rotary_factor ", r.partial_rotary_factor,
             ": only full rotary embeddings are implemented");
  DecoderLayout l;
  const int64_t h = c.hidden_size, d = c.head_dim, I = c.intermediate_size, V = c.vocab_size;
  auto add = [&](const std::string& name, Shape shape, bool decay) {
    ParamInfo p;
    p.name = name;
    p.shape = std::move(shape);
    p.offset = l.total;
    p.decay = decay;
    l.total += p.numel();
    l.params.push_back(std::move(p));
    return l.params.back().offset;
  };
  l.embed = add("model.embed_tokens.weight", {V, h}, true);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string pre = "model.layers." + std::to_string(i) + ".";
    DecoderLayerOffsets o;
    o.begin = l.total;
    o.norm_in = add(pre + "input_layernorm.weight", {h}, false);
    o.qkv_w = add(pre + "self_attn.q_proj.weight", {c.num_heads * d, h}, true);
    add(pre + "self_attn.k_proj.weight", {c.num_kv_heads * d, h}, true);
    add(pre + "self_attn.v_proj.weight", {c.num_kv_heads * d, h}, true);
    if (c.qkv_bias) {
      o.qkv_b = add(pre + "self_attn.q_proj.bias", {c.num_heads * d}, false);
      add(pre + "self_attn.k_proj.bias", {c.num_kv_heads * d}, false);
      add(pre + "self_attn.v_proj.bias", {c.num_kv_heads * d}, false);
    }
    if (c.qk_norm) {
      o.q_norm = add(pre + "self_attn.q_norm.weight", {d}, false);
      o.k_norm = add(pre + "self_attn.k_norm.weight", {d}, false);
    }
    o.o_w = add(pre + "self_attn.o_proj.weight", {h, c.num_heads * d}, true);
    if (c.o_bias) o.o_b = add(pre + "self_attn.o_proj.bias", {h}, false);
    o.norm_post_attn = add(pre + "post_attention_layernorm.weight", {h}, false);
    if (c.sandwich_norms) {
      o.norm_pre_ff = add(pre + "pre_feedforward_layernorm.weight", {h}, false);
      o.norm_post_ff = add(pre + "post_feedforward_layernorm.weight", {h}, false);
    }
    o.gate_up_w = add(pre + "mlp.gate_proj.weight", {I, h}, true);
    add(pre + "mlp.up_proj.weight", {I, h}, true);
    if (c.mlp_bias) {
      o.gate_up_b = add(pre + "mlp.gate_proj.bias", {I}, false);
      add(pre + "mlp.up_proj.bias", {I}, false);
    }
    o.down_w = add(pre + "mlp.down_proj.weight", {h, I}, true);
    if (c.mlp_bias) o.down_b = add(pre + "mlp.down_proj.bias", {h}, false);
    o.end = l.total;
    l.layers.push_back(o);
  }
  l.final_norm = add("model.norm.weight", {h}, false);
  if (!c.tie_word_embeddings) l.lm_head = add("lm_head.weight", {V, h}, true);
  return l;
}

}  // namespace ct::model

// DecoderConfig: the HF config.json of a decoder family (gpt2, llama, mistral, qwen2, qwen3, gemma3_text), in
// the transformers 4.x form (top-level rope_theta / rope_scaling, no layer_types) and the 5.x form
// (rope_parameters, per layer type for Gemma 3, layer_types), as one description of the shared decoder body:
// the families differ only in data held here (norm kind, activation, biases, q/k norms, sandwich norms,
// embedding scale, score scale, sliding layers, RoPE per layer type, learned positions). An option the body
// does not implement (a rope type, softcapping, bidirectional attention, GPT-2's inverse-layer scaling) is a
// one-line error naming the field, never a silently different model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/activation.h"

namespace ct::model {

enum class DecoderFamily { gpt2, llama, mistral, qwen2, qwen3, gemma3_text };

// The model_type values read here ("gpt2", "llama", ...).
bool is_decoder_model_type(const std::string& model_type);

enum class DecoderNorm {
  layernorm,       // GPT-2: LayerNorm with bias
  rms,             // Llama family: x * rsqrt(mean(x^2) + eps) * w
  rms_unit_offset  // Gemma: ... * (1 + w), w stored zero-centred
};

// One RoPE as modeling_rope_utils describes it (rope_type and its parameters, theta resolved).
struct RopeSpec {
  std::string type = "default";  // default, linear, dynamic, yarn, llama3
  double theta = 10000.0;
  double factor = 1.0;
  double partial_rotary_factor = 1.0;
  int64_t original_max_positions = 0;  // llama3, yarn (and dynamic's max_position_embeddings)
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  double beta_fast = 32.0, beta_slow = 1.0;              // yarn
  double attention_factor = 0.0;              // yarn; 0 = derived from factor (and mscale / mscale_all_dim)
  double mscale = 0.0, mscale_all_dim = 0.0;  // yarn (DeepSeek-style); 0 = unset
  bool truncate = true;                       // yarn
};

// A rope_scaling (4.x) or rope_parameters (5.x, one layer type's) object read into a RopeSpec; `params` may
// be null (default RoPE at `theta`); its own rope_theta wins over `theta`. `where` names it in errors.
RopeSpec rope_spec_from_json(const nlohmann::json* params, double theta, int64_t max_positions,
                             const std::string& where);

// inv_freq[i] for i < d / 2 (d = int(head_dim * partial_rotary_factor)) and the attention scaling the cos/sin
// tables are multiplied by, in f32 as transformers computes them. `seq_len` only matters for dynamic (the
// length the table must reach: max(position_ids) + 1).
struct RopeFrequencies {
  std::vector<float> inv_freq;
  float attention_scaling = 1.0f;
};
RopeFrequencies rope_frequencies(const RopeSpec& rope, int64_t head_dim, int64_t max_positions,
                                 int64_t seq_len = 0);

struct DecoderLayerSpec {
  int64_t window = 0;  // sliding window W (keys including the query's own); 0 = full causal
  int rope = 0;        // index into DecoderConfig::ropes
};

struct DecoderConfig {
  std::string model_type;
  DecoderFamily family = DecoderFamily::llama;
  int64_t vocab_size = 0, hidden_size = 0, intermediate_size = 0, num_layers = 0;
  int64_t num_heads = 0, num_kv_heads = 0, head_dim = 0, max_positions = 0;
  DecoderNorm norm = DecoderNorm::rms;
  double norm_eps = 1e-6;
  std::string hidden_act;  // as the file names it
  kernels::Activation act = kernels::Activation::silu;
  bool tie_word_embeddings = false;
  bool qkv_bias = false, o_bias = false, mlp_bias = false;  // GPT-2: all true (Conv1D biases)
  bool qk_norm = false;                                     // Qwen3, Gemma 3: RMSNorm of q and k per head
  bool sandwich_norms = false;  // Gemma 3: post-attention and pre/post-feedforward norms (four per layer)
  float embed_scale = 0.0f;     // Gemma 3: sqrt(hidden_size) (f32); 0 = none
  float score_scale =
      0.0f;  // the attention scores' factor (head_dim^-0.5; Gemma 3 query_pre_attn_scalar^-0.5)
  bool learned_positions = false;  // GPT-2: wpe
  bool conv1d = false;             // GPT-2: [in, out] weights, fused c_attn
  double embd_dropout = 0.0, attn_dropout = 0.0, resid_dropout = 0.0;
  double initializer_range = 0.02;
  int64_t bos_token_id = -1, pad_token_id = -1;
  std::vector<int64_t> eos_token_ids;
  std::vector<RopeSpec> ropes;  // GPT-2: none; Gemma 3: full then sliding
  std::vector<DecoderLayerSpec> layers;
  // Fields not consumed, for round-tripping into a saved config.json.
  nlohmann::json extra = nlohmann::json::object();
  // The file as read: decoder_config_to_json writes it back with what the engine changed.
  nlohmann::json file = nlohmann::json::object();
};

// Reads one config.json object; `source` names the file in errors.
DecoderConfig decoder_config_from_json(const nlohmann::json& j, const std::string& source);
DecoderConfig load_decoder_config(const std::string& path);

// config.json as save_pretrained writes it after training: the file as read, with vocab_size (a resized
// embedding), the <Family>ForCausalLM architecture and float32 as the dtype (the 4.x and 5.x key).
nlohmann::json decoder_config_to_json(const DecoderConfig& c);
// transformers' class name: LlamaForCausalLM, Qwen3ForCausalLM, Gemma3ForCausalLM, GPT2LMHeadModel, ...
std::string decoder_architecture(const DecoderConfig& c);

}  // namespace ct::model

// Decoder config.json files as the Hub has them (4.x and 5.x forms) into DecoderConfig, RoPE frequencies
// against torch after modeling_rope_utils (tools/make_rope_golden.py), and the one-line errors for options
// the body does not implement.
#include "model/decoder_config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.h"
#include "core/fs.h"

namespace ct::model {
namespace {

using nlohmann::json;

DecoderConfig read(const std::string& text) {
  return decoder_config_from_json(json::parse(text), "config.json");
}

void expect_error(const std::string& text, const std::string& want) {
  try {
    read(text);
    ADD_FAILURE() << "no error; wanted: " << want;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
  }
}

// HuggingFaceTB/SmolLM2-135M's config (4.x form).
const char* kSmolLM2 =
    R"({"architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu", "hidden_size": 576, "initializer_range": 0.041666666666666664,
  "intermediate_size": 1536, "is_llama_config": true, "max_position_embeddings": 8192, "model_type": "llama",
  "num_attention_heads": 9, "num_hidden_layers": 30, "num_key_value_heads": 3, "pretraining_tp": 1,
  "rms_norm_eps": 1e-05, "rope_interleaved": false, "rope_scaling": null, "rope_theta": 100000,
  "tie_word_embeddings": true, "torch_dtype": "bfloat16", "transformers_version": "4.40.1", "use_cache": true,
  "vocab_size": 49152})";

TEST(DecoderConfig, SmolLM2IsALlama) {
  const DecoderConfig c = read(kSmolLM2);
  EXPECT_EQ(c.family, DecoderFamily::llama);
  EXPECT_EQ(c.num_heads, 9);
  EXPECT_EQ(c.num_kv_heads, 3);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.norm, DecoderNorm::rms);
  EXPECT_EQ(c.act, kernels::Activation::silu);
  EXPECT_FALSE(c.qkv_bias || c.o_bias || c.mlp_bias || c.qk_norm || c.sandwich_norms);
  EXPECT_EQ(c.score_scale, static_cast<float>(std::pow(64.0, -0.5)));
  ASSERT_EQ(c.ropes.size(), 1u);
  EXPECT_EQ(c.ropes[0].theta, 100000.0);
  EXPECT_EQ(c.layers.size(), 30u);
  EXPECT_EQ(c.layers[7].window, 0);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int64_t>{0}));
  EXPECT_EQ(c.extra.value("is_llama_config", false), true);  // round-trips
  EXPECT_FALSE(c.extra.contains("rope_theta"));
}

TEST(DecoderConfig, QwenFamilies) {
  // Qwen/Qwen2.5-0.5B: q/k/v biases, sliding window off.
  const DecoderConfig q2 = read(R"({"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
    "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "max_position_embeddings": 32768,
    "max_window_layers": 24, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768,
    "use_sliding_window": false, "tie_word_embeddings": true, "vocab_size": 151936, "bos_token_id": 151643,
    "eos_token_id": 151643, "hidden_act": "silu"})");
  EXPECT_TRUE(q2.qkv_bias);
  EXPECT_FALSE(q2.o_bias);
  EXPECT_EQ(q2.layers[23].window, 0);
  // The same with the window on: layers from max_window_layers slide.
  json j = json::parse(R"({"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 4, "num_attention_heads": 4, "vocab_size": 100, "use_sliding_window": true,
    "sliding_window": 16, "max_window_layers": 2})");
  const DecoderConfig w = decoder_config_from_json(j, "config.json");
  EXPECT_EQ(w.layers[1].window, 0);
  EXPECT_EQ(w.layers[2].window, 16);
  // Qwen/Qwen3-0.6B: head_dim 128 != hidden / heads, q/k norms, no biases, list of eos ids in 5.x form.
  const DecoderConfig q3 = read(R"({"model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072,
    "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
    "max_position_embeddings": 40960, "rms_norm_eps": 1e-06, "vocab_size": 151936, "tie_word_embeddings": true,
    "attention_bias": false, "rope_parameters": {"rope_type": "default", "rope_theta": 1000000},
    "layer_types": ["full_attention", "full_attention", "full_attention", "full_attention", "full_attention",
    "full_attention", "full_attention", "full_attention", "full_attention", "full_attention", "full_attention",
    "full_attention", "full_attention", "full_attention", "full_attention", "full_attention", "full_attention",
    "full_attention", "full_attention", "full_attention", "full_attention", "full_attention", "full_attention",
    "full_attention", "full_attention", "full_attention", "full_attention", "full_attention"],
    "eos_token_id": [151645, 151643], "dtype": "bfloat16"})");
  EXPECT_EQ(q3.head_dim, 128);
  EXPECT_TRUE(q3.qk_norm);
  EXPECT_FALSE(q3.qkv_bias);
  EXPECT_EQ(q3.ropes[0].theta, 1e6);
  EXPECT_EQ(q3.eos_token_ids, (std::vector<int64_t>{151645, 151643}));
}

TEST(DecoderConfig, Llama32Llama3Rope) {
  const DecoderConfig c = read(R"({"model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
    "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "vocab_size": 128256,
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
    "original_max_position_embeddings": 8192, "rope_type": "llama3"}, "tie_word_embeddings": true,
    "mlp_bias": false, "bos_token_id": 128000, "eos_token_id": 128001})");
  ASSERT_EQ(c.ropes.size(), 1u);
  EXPECT_EQ(c.ropes[0].type, "llama3");
  EXPECT_EQ(c.ropes[0].factor, 32.0);
  EXPECT_EQ(c.ropes[0].original_max_positions, 8192);
  EXPECT_EQ(c.ropes[0].theta, 500000.0);
}

// google/gemma-3-270m as 4.55 saves it (layer_types present) and as 5.x does (rope_parameters per layer
// type), and a 4.50 file with neither (the pattern of 6).
TEST(DecoderConfig, Gemma3InBothForms) {
  const std::string common = R"("model_type": "gemma3_text", "hidden_size": 640, "intermediate_size": 2048,
    "num_hidden_layers": 18, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256,
    "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "vocab_size": 262144, "query_pre_attn_scalar": 256,
    "sliding_window": 512, "hidden_activation": "gelu_pytorch_tanh", "final_logit_softcapping": null,
    "attn_logit_softcapping": null, "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0)";
  const DecoderConfig v4 = read("{" + common + R"(, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
    "rope_scaling": null, "_sliding_window_pattern": 6})");
  json lt = json::array();
  for (int i = 0; i < 18; ++i) lt.push_back((i + 1) % 6 ? "sliding_attention" : "full_attention");
  const DecoderConfig v5 = read("{" + common + R"(, "layer_types": )" + lt.dump() + R"(, "rope_parameters": {
    "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}})");
  for (const DecoderConfig* c : {&v4, &v5}) {
    EXPECT_EQ(c->norm, DecoderNorm::rms_unit_offset);
    EXPECT_TRUE(c->sandwich_norms && c->qk_norm && c->tie_word_embeddings);
    EXPECT_EQ(c->act, kernels::Activation::gelu_tanh);
    EXPECT_EQ(c->embed_scale, std::sqrt(640.0f));
    EXPECT_EQ(c->score_scale, 1.0f / 16.0f);
    ASSERT_EQ(c->ropes.size(), 2u);
    EXPECT_EQ(c->ropes[0].theta, 1e6);
    EXPECT_EQ(c->ropes[1].theta, 1e4);
    for (int i = 0; i < 18; ++i) {
      const bool full = (i + 1) % 6 == 0;
      EXPECT_EQ(c->layers[i].window, full ? 0 : 512) << i;
      EXPECT_EQ(c->layers[i].rope, full ? 0 : 1) << i;
    }
  }
}

TEST(DecoderConfig, Gpt2AndMistral) {
  const DecoderConfig g = read(R"({"model_type": "gpt2", "activation_function": "gelu_new", "n_ctx": 1024,
    "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024, "layer_norm_epsilon": 1e-05,
    "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1, "vocab_size": 50257, "bos_token_id": 50256,
    "eos_token_id": 50256, "scale_attn_weights": true})");
  EXPECT_EQ(g.norm, DecoderNorm::layernorm);
  EXPECT_EQ(g.intermediate_size, 3072);
  EXPECT_TRUE(g.conv1d && g.learned_positions && g.qkv_bias && g.o_bias && g.mlp_bias &&
              g.tie_word_embeddings);
  EXPECT_EQ(g.attn_dropout, 0.1);
  EXPECT_TRUE(g.ropes.empty());
  EXPECT_EQ(g.act, kernels::Activation::gelu_tanh);
  const DecoderConfig m = read(R"({"model_type": "mistral", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
    "sliding_window": 4096})");
  EXPECT_EQ(m.layers[0].window, 4096);
  EXPECT_EQ(m.layers[1].window, 4096);
  EXPECT_FALSE(m.tie_word_embeddings);
}

TEST(DecoderConfig, UnsupportedOptionsAreOneLineErrors) {
  const std::string llama = R"("hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "vocab_size": 100)";
  expect_error("{" + llama + "}", "field \"model_type\" is \"\", expected a decoder");
  expect_error(R"({"model_type": "bert", )" + llama + "}", "expected a decoder: gpt2, llama");
  expect_error(
      R"({"model_type": "llama", "rope_scaling": {"rope_type": "longrope", "factor": 2}, )" + llama + "}",
      "rope_scaling.rope_type is \"longrope\"");
  expect_error(R"({"model_type": "llama", "rope_scaling": {"rope_type": "linear"}, )" + llama + "}",
               "rope_scaling.factor is missing");
  expect_error(R"({"model_type": "llama", "num_key_value_heads": 3, )" + llama + "}",
               "is not a multiple of \"num_key_value_heads\" 3");
  expect_error(R"({"model_type": "llama", "hidden_act": "swiglu2", )" + llama + "}",
               "field \"hidden_act\" is \"swiglu2\"");
  expect_error(R"({"model_type": "qwen2", "num_experts": 8, )" + llama + "}", "mixture-of-experts");
  expect_error(R"({"model_type": "gemma3_text", "final_logit_softcapping": 30.0, )" + llama + "}",
               "field \"final_logit_softcapping\" is set");
  expect_error(R"({"model_type": "gemma3_text", "use_bidirectional_attention": true, )" + llama + "}",
               "field \"use_bidirectional_attention\" is true");
  expect_error(R"({"model_type": "gpt2", "scale_attn_by_inverse_layer_idx": true})",
               "field \"scale_attn_by_inverse_layer_idx\" is true");
  expect_error(
      R"({"model_type": "llama", "layer_types": ["full_attention", "chunked_attention"], )" + llama + "}",
      "field \"layer_types\"[1] is chunked_attention");
  expect_error(R"({"model_type": "llama", "eos_token_id": 100, )" + llama + "}",
               "field \"eos_token_id\" 100 is outside the vocabulary of 100");
  expect_error(R"({"model_type": "llama", "vocab_size": 100, "hidden_size": "64"})",
               "field \"hidden_size\" must be an integer");
}

TEST(DecoderConfig, RopeFrequenciesEqualTorch) {
  const json g =
      json::parse(fs::read_file(std::string(CORETRAIN_SOURCE_DIR) + "/tests/model/data/rope_golden.json"));
  ASSERT_GE(g["cases"].size(), 10u);
  for (const auto& c : g["cases"]) {
    const std::string name = c["name"];
    const RopeSpec spec = rope_spec_from_json(&c["params"], 10000.0, c["max_positions"], name);
    const RopeFrequencies f =
        rope_frequencies(spec, c["head_dim"], c["max_positions"], c["seq_len"].get<int64_t>());
    ASSERT_EQ(f.inv_freq.size(), c["inv_freq"].size()) << name;
    for (size_t i = 0; i < f.inv_freq.size(); ++i) {
      const double want = c["inv_freq"][i];
      // torch's vectorized pow may differ from libm's powf in the last bit.
      EXPECT_NEAR(f.inv_freq[i], want, 4e-7 * std::fabs(want)) << name << " [" << i << "]";
    }
    EXPECT_NEAR(f.attention_scaling, c["attention_scaling"].get<double>(), 1e-6) << name;
  }
}

}  // namespace
}  // namespace ct::model

// ModelConfig: the HF config.json of a BERT-family model, by HF field names. BERT and DistilBERT name the
// same things differently (hidden_size/dim, num_hidden_layers/n_layers, ...); this struct holds one common
// view, and the reader/writer translate per model_type so a saved config.json is what HF would write.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace ct::model {

struct ModelConfig {
  std::string model_type = "bert";  // "bert" or "distilbert"
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;         // distilbert: dim
  int64_t num_hidden_layers = 12;    // distilbert: n_layers
  int64_t num_attention_heads = 12;  // distilbert: n_heads
  int64_t intermediate_size = 3072;  // distilbert: hidden_dim
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;                // 0 for distilbert (no token type embeddings)
  double hidden_dropout_prob = 0.1;           // distilbert: dropout
  double attention_probs_dropout_prob = 0.1;  // distilbert: attention_dropout
  double qa_dropout = 0.1;                    // distilbert only; BERT's QA head has no dropout
  double layer_norm_eps = 1e-12;
  double initializer_range = 0.02;
  std::string hidden_act = "gelu";  // distilbert: activation
  int64_t pad_token_id = 0;
  bool sinusoidal_pos_embds = false;  // distilbert; rejected when true (not supported)
  // Fields we do not interpret, kept so a saved config.json round-trips them.
  nlohmann::json extra = nlohmann::json::object();

  bool is_distilbert() const { return model_type == "distilbert"; }
  int64_t head_dim() const { return hidden_size / num_attention_heads; }
};

// Reads and validates config.json; throws ct::Error naming the path and the field on anything unusable
// (unknown model_type, missing or mistyped required fields, hidden_size not divisible by heads, ...).
ModelConfig load_config(const std::string& path);
ModelConfig config_from_json(const nlohmann::json& j, const std::string& source);
// HF-style config.json text for this config (field names per model_type, architectures set for QA).
std::string config_to_json(const ModelConfig& config);

}  // namespace ct::model

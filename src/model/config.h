// ModelConfig: the HF config.json of a BERT-family encoder, by HF field names, as one description of the
// encoder: BERT, DistilBERT, RoBERTa / XLM-RoBERTa / CamemBERT and ELECTRA differ only in data held here
// (position scheme, embedding width and projection, layer-norm eps, token types, names). DistilBERT names
// the same things differently (hidden_size/dim, num_hidden_layers/n_layers, ...); the reader/writer
// translate per model_type so a saved config.json is what HF would write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ct::model {

// How position ids are made: BERT's 0..T-1, or RoBERTa's padding_idx + 1 + the count of non-pad tokens so
// far (pad tokens sit at padding_idx), so the first real token is at 2 with padding_idx 1.
enum class PositionScheme { absolute, after_padding_idx };

// The task heads over the encoder (config.json "architectures": <Family>For<Head>).
enum class HeadKind { span, sequence_classification, token_classification, masked_lm, multiple_choice };

struct ModelConfig {
  // "bert", "distilbert", "roberta", "xlm-roberta", "camembert", "electra" or "deberta-v2"
  std::string model_type = "bert";
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;         // distilbert: dim
  int64_t num_hidden_layers = 12;    // distilbert: n_layers
  int64_t num_attention_heads = 12;  // distilbert: n_heads
  int64_t intermediate_size = 3072;  // distilbert: hidden_dim
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;  // 0 for distilbert (no token type embeddings)
  int64_t embedding_size = 0;   // electra: embedding width, projected to hidden_size when it differs
  PositionScheme positions = PositionScheme::absolute;
  double hidden_dropout_prob = 0.1;           // distilbert: dropout
  double attention_probs_dropout_prob = 0.1;  // distilbert: attention_dropout
  double qa_dropout = 0.1;                    // distilbert only; BERT's QA head has no dropout
  double layer_norm_eps = 1e-12;
  double initializer_range = 0.02;
  std::string hidden_act = "gelu";  // distilbert: activation
  int64_t pad_token_id = 0;
  bool sinusoidal_pos_embds = false;  // distilbert; rejected when true (not supported)
  // Task heads (PretrainedConfig): num_labels is len(id2label) when the file has one; problem_type ""
  // means null (the loss is picked from num_labels and the labels' type, as transformers does).
  int64_t num_labels = 2;
  std::string problem_type;          // "", "regression", "single_label_classification", ...
  double classifier_dropout = -1.0;  // null: hidden_dropout_prob (BERT, RoBERTa, ELECTRA)
  double seq_classif_dropout = 0.2;  // distilbert's sequence-classification / multiple-choice dropout
  // config.json "architectures" as read (the writer names the head it saves instead).
  std::vector<std::string> architectures;
  // ELECTRA's SequenceSummary (ElectraForMultipleChoice's head; ElectraConfig's fields and defaults): the
  // first token -> dropout(summary_first_dropout, a field only when the file has one) ->
  // sequence_summary.summary [H, H] -> summary_activation -> dropout(summary_last_dropout) -> classifier.
  std::string summary_type = "first";
  bool summary_use_proj = true;
  std::string summary_activation = "gelu";  // "" when the file says null (no activation)
  double summary_first_dropout = 0.0, summary_last_dropout = 0.1;
  bool summary_proj_to_labels = false;
  // ModernBERT (model/modernbert_config.cpp): rotary local/global attention and its heads' options.
  int64_t global_attn_every_n_layers = 0;  // layer l attends globally when l % n == 0
  int64_t local_attention = 0;             // window width: local layers see local_attention / 2 each side
  double global_rope_theta = 160000.0, local_rope_theta = 10000.0;
  double initializer_cutoff_factor = 2.0;
  double mlp_dropout = 0.0;
  std::string classifier_pooling = "cls";  // "cls" | "mean"
  std::string classifier_activation = "gelu";
  // DeBERTa-v2/v3 only (model/deberta_body.cpp), DebertaV2Config's names. Its cls_dropout is
  // classifier_dropout here; embedding_size, when it differs from hidden_size, is the bias-free embed_proj.
  bool relative_attention = false;
  int64_t position_buckets = -1;          // <= 0: no log bucketing
  int64_t max_relative_positions = -1;    // < 1: max_position_embeddings
  std::vector<std::string> pos_att_type;  // "c2p", "p2c"
  bool share_att_key = false;
  bool norm_rel_ebd = false;  // norm_rel_ebd names "layer_norm"
  bool position_biased_input = true;
  double pooler_dropout = 0.0;
  std::string pooler_hidden_act = "gelu";
  bool legacy = true;  // the MLM head's names: cls.predictions.* (true) or lm_predictions.lm_head.*
  // Fields we do not interpret, kept so a saved config.json round-trips them.
  nlohmann::json extra = nlohmann::json::object();

  bool is_distilbert() const { return model_type == "distilbert"; }
  bool is_roberta_like() const {
    return model_type == "roberta" || model_type == "xlm-roberta" || model_type == "camembert";
  }
  bool is_electra() const { return model_type == "electra"; }
  bool is_modernbert() const { return model_type == "modernbert"; }
  bool is_deberta() const { return model_type == "deberta-v2"; }
  bool has_c2p() const;  // DeBERTa's position terms in use (relative_attention and pos_att_type)
  bool has_p2c() const;
  // DeBERTa's relative span: rows of rel_embeddings are 2 * this.
  int64_t relative_span() const;
  int64_t head_dim() const { return hidden_size / num_attention_heads; }
  // Width of the embedding tables (ELECTRA's embedding_size, else hidden_size).
  int64_t embedding_width() const { return embedding_size > 0 ? embedding_size : hidden_size; }
  bool projects_embeddings() const { return embedding_width() != hidden_size; }
  // base_model_prefix of the family's HF classes, with the dot: "bert.", "distilbert.", "roberta.", ...
  std::string base_prefix() const;
  // The family's HF class name prefix: "Bert", "DistilBert", "Roberta", "XLMRoberta", "Camembert", "Electra".
  std::string class_prefix() const;
  // The dropout before a classifier: classifier_dropout when set, else hidden_dropout_prob.
  double classifier_dropout_or_hidden() const {
    return classifier_dropout >= 0.0 ? classifier_dropout : hidden_dropout_prob;
  }
};

// Reads and validates config.json; throws ct::Error naming the path and the field on anything unusable
// (unknown model_type, missing or mistyped required fields, hidden_size not divisible by heads, ...).
ModelConfig load_config(const std::string& path);
ModelConfig config_from_json(const nlohmann::json& j, const std::string& source);
// HF-style config.json text for this config (field names per model_type, "architectures" naming the head).
std::string config_to_json(const ModelConfig& config, HeadKind head = HeadKind::span);

// "qa" | "seq-cls" | "token-cls" | "mlm" | "multiple-choice" (the bench's and tasks' names) to a HeadKind;
// throws naming the value otherwise. head_name is the inverse.
HeadKind head_from_name(const std::string& name);
const char* head_name(HeadKind head);
// "ForQuestionAnswering", "ForSequenceClassification", ... (HF's class suffix).
const char* head_class_suffix(HeadKind head);
// The head config.json's "architectures" names (<Family>ForSequenceClassification -> sequence
// classification, ...), or `fallback` when it names none (a base model, ForPreTraining, no field).
HeadKind head_from_architectures(const ModelConfig& config, HeadKind fallback);

}  // namespace ct::model

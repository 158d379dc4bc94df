// ModernBertConfig fields by name. Unknown fields and the ones only checked (norm_bias, attention_bias, ...)
// stay in `extra`, so a saved config.json is what was read, with the engine's own fields rewritten.
#include "model/modernbert_config.h"

#include <cmath>
#include <set>

#include "core/error.h"
#include "kernels/activation.h"
#include "model/config_fields.h"

namespace ct::model {

namespace {

using nlohmann::json;
using Fields = ConfigFields;

// Newer transformers write the per-layer-type RoPE thetas as rope_parameters and the layer pattern as
// layer_types; both must say what global_attn_every_n_layers and the two thetas say.
void read_rope(ModelConfig& c, Fields& f) {
  if (f.find("rope_scaling"))
    fail(f.source(), ": field \"rope_scaling\" is set, only unscaled RoPE is supported");
  if (const json* rp = f.find("rope_parameters")) {
    if (!rp->is_object()) fail(f.source(), ": field \"rope_parameters\" must be an object by layer type");
    for (const auto& [type, theta] :
         {std::pair<const char*, double*>{"full_attention", &c.global_rope_theta},
          std::pair<const char*, double*>{"sliding_attention", &c.local_rope_theta}}) {
      auto it = rp->find(type);
      if (it == rp->end() || it->is_null()) continue;
      const std::string rt = it->value("rope_type", std::string("default"));
      if (rt != "default")
        fail(f.source(), ": field \"rope_parameters\" has rope_type \"", rt, "\" for ", type,
             ", only \"default\" is supported");
      auto th = it->find("rope_theta");
      if (th != it->end() && th->is_number()) *theta = th->get<double>();
    }
  }
  if (const json* lt = f.find("layer_types")) {
    if (!lt->is_array() || static_cast<int64_t>(lt->size()) != c.num_hidden_layers)
      fail(f.source(), ": field \"layer_types\" must list one type per layer (", c.num_hidden_layers, ")");
    for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
      const bool global = l % c.global_attn_every_n_layers == 0;
      const json& t = (*lt)[static_cast<size_t>(l)];
      if (!t.is_string() || t.get<std::string>() != (global ? "full_attention" : "sliding_attention"))
        fail(f.source(), ": field \"layer_types\"[", l, "] is ", t.dump(),
             ", but global_attn_every_n_layers ", c.global_attn_every_n_layers, " makes layer ", l,
             global ? " full_attention" : " sliding_attention");
    }
  }
}

}  // namespace

ModelConfig modernbert_config_from_json(const json& j, const std::string& source) {
  Fields f(j, source);
  f.use("model_type");
  ModelConfig c;
  c.model_type = "modernbert";
  c.vocab_size = f.positive("vocab_size", true, 0);
  c.hidden_size = f.positive("hidden_size", true, 0);
  c.num_hidden_layers = f.positive("num_hidden_layers", true, 0);
  c.num_attention_heads = f.positive("num_attention_heads", true, 0);
  c.intermediate_size = f.positive("intermediate_size", true, 0);
  c.max_position_embeddings = f.positive("max_position_embeddings", false, 8192);
  if (c.hidden_size % c.num_attention_heads != 0)
    fail(source, ": \"hidden_size\" ", c.hidden_size, " is not divisible by \"num_attention_heads\" ",
         c.num_attention_heads);
  if ((c.hidden_size / c.num_attention_heads) % 2 != 0)
    fail(source, ": \"hidden_size\" / \"num_attention_heads\" is ", c.hidden_size / c.num_attention_heads,
         ", rotary embeddings need an even head size");
  c.type_vocab_size = 0;
  c.hidden_act = f.string("hidden_activation", "gelu");
  activation_field(source, "hidden_activation", c.hidden_act, false);
  c.classifier_activation = f.string("classifier_activation", "gelu");
  activation_field(source, "classifier_activation", c.classifier_activation, false);
  c.initializer_range = f.number("initializer_range", 0.02);
  if (!(c.initializer_range >= 0.0 && std::isfinite(c.initializer_range)))
    fail(source, ": field \"initializer_range\" must be a finite non-negative number, saw ",
         c.initializer_range);
  c.initializer_cutoff_factor = f.number("initializer_cutoff_factor", 2.0);
  if (!(c.initializer_cutoff_factor > 0.0))
    fail(source, ": field \"initializer_cutoff_factor\" must be positive, saw ", c.initializer_cutoff_factor);
  c.layer_norm_eps = f.number("norm_eps", 1e-5);
  if (!(c.layer_norm_eps > 0.0 && std::isfinite(c.layer_norm_eps)))
    fail(source, ": field \"norm_eps\" must be a positive number, saw ", c.layer_norm_eps);
  c.pad_token_id = f.integer("pad_token_id", false, 50283);
  if (c.pad_token_id < 0 || c.pad_token_id >= c.vocab_size)
    fail(source, ": field \"pad_token_id\" ", c.pad_token_id, " is outside the vocabulary of ", c.vocab_size);
  c.global_rope_theta = f.number("global_rope_theta", 160000.0);
  c.local_rope_theta = f.number("local_rope_theta", 10000.0);
  c.global_attn_every_n_layers = f.positive("global_attn_every_n_layers", false, 3);
  c.local_attention = f.positive("local_attention", false, 128);
  if (c.local_attention % 2 != 0)
    fail(source, ": field \"local_attention\" is ", c.local_attention,
         ", expected an even window (local_attention / 2 tokens each side)");
  read_rope(c, f);
  for (double theta : {c.global_rope_theta, c.local_rope_theta})
    if (!(theta > 0.0 && std::isfinite(theta)))
      fail(source, ": field \"global_rope_theta\"/\"local_rope_theta\" must be positive, saw ", theta);
  c.hidden_dropout_prob = f.probability("embedding_dropout");
  c.attention_probs_dropout_prob = f.probability("attention_dropout");
  c.mlp_dropout = f.probability("mlp_dropout");
  c.classifier_dropout = f.probability("classifier_dropout");
  c.qa_dropout = 0.0;
  c.classifier_pooling = f.string("classifier_pooling", "cls");
  if (c.classifier_pooling != "cls" && c.classifier_pooling != "mean")
    fail(source, ": field \"classifier_pooling\" is \"", c.classifier_pooling, "\", expected cls or mean");
  f.only("norm_bias", false, false, "the Hub checkpoints' norms have no bias");
  f.only("attention_bias", false, false, "Wqkv and Wo without bias");
  f.only("mlp_bias", false, false, "Wi and Wo without bias");
  f.only("classifier_bias", false, false, "head.dense without bias");
  f.only("decoder_bias", true, true, "the MLM decoder has a bias");
  f.only("tie_word_embeddings", true, true, "the MLM decoder is the token embeddings");
  // Head fields (PretrainedConfig).
  if (const json* labels = f.find("id2label")) {
    if (!labels->is_object() || labels->empty())
      fail(source, ": field \"id2label\" must be a non-empty object of label names by id");
    c.num_labels = static_cast<int64_t>(labels->size());
  }
  if (f.find("num_labels")) c.num_labels = f.positive("num_labels", false, c.num_labels);
  if (f.find("problem_type")) {
    c.problem_type = f.string("problem_type", "");
    if (c.problem_type != "regression" && c.problem_type != "single_label_classification" &&
        c.problem_type != "multi_label_classification")
      fail(source, ": field \"problem_type\" is \"", c.problem_type,
           "\", expected regression, single_label_classification or multi_label_classification");
  }
  if (const json* arch = f.find("architectures"); arch && arch->is_array())
    for (const auto& a : *arch)
      if (a.is_string()) c.architectures.push_back(a.get<std::string>());
  c.extra = f.rest();
  return c;
}

void write_modernbert_fields(const ModelConfig& c, json& j) {
  j["hidden_size"] = c.hidden_size;
  j["num_hidden_layers"] = c.num_hidden_layers;
  j["num_attention_heads"] = c.num_attention_heads;
  j["intermediate_size"] = c.intermediate_size;
  j["hidden_activation"] = c.hidden_act;
  j["classifier_activation"] = c.classifier_activation;
  j["initializer_cutoff_factor"] = c.initializer_cutoff_factor;
  j["norm_eps"] = c.layer_norm_eps;
  j["global_rope_theta"] = c.global_rope_theta;
  j["local_rope_theta"] = c.local_rope_theta;
  j["global_attn_every_n_layers"] = c.global_attn_every_n_layers;
  j["local_attention"] = c.local_attention;
  j["embedding_dropout"] = c.hidden_dropout_prob;
  j["attention_dropout"] = c.attention_probs_dropout_prob;
  j["mlp_dropout"] = c.mlp_dropout;
  j["classifier_dropout"] = c.classifier_dropout;
  j["classifier_pooling"] = c.classifier_pooling;
  // rope_parameters, if the file had them, must not contradict the thetas written above.
  if (j.contains("rope_parameters") && j["rope_parameters"].is_object()) {
    json& rp = j["rope_parameters"];
    if (rp.contains("full_attention") && rp["full_attention"].is_object())
      rp["full_attention"]["rope_theta"] = c.global_rope_theta;
    if (rp.contains("sliding_attention") && rp["sliding_attention"].is_object())
      rp["sliding_attention"]["rope_theta"] = c.local_rope_theta;
  }
}

}  // namespace ct::model

// config.json reader/writer: translates BERT's and DistilBERT's HF field names to and from ModelConfig,
// validating types and ranges so a bad config fails here, with its field named, and not deep in the model.
#include "model/config.h"

#include <cmath>
#include <set>

#include "core/error.h"
#include "core/fs.h"
#include "kernels/activation.h"

namespace ct::model {

namespace {

using nlohmann::json;

// Fields the writer sets itself, never copied from `extra`.
const std::set<std::string> kWriterOwned = {"architectures", "torch_dtype", "model_type"};

class Reader {
 public:
  Reader(const json& j, const std::string& source) : j_(j), source_(source) {}

  int64_t integer(const std::string& key, bool required, int64_t fallback) {
    const json* v = take(key, required);
    if (!v) return fallback;
    if (!v->is_number_integer()) bad_type(key, "an integer", *v);
    return v->get<int64_t>();
  }
  double number(const std::string& key, double fallback) {
    const json* v = take(key, false);
    if (!v) return fallback;
    if (!v->is_number()) bad_type(key, "a number", *v);
    return v->get<double>();
  }
  std::string string(const std::string& key, bool required, const std::string& fallback) {
    const json* v = take(key, required);
    if (!v) return fallback;
    if (!v->is_string()) bad_type(key, "a string", *v);
    return v->get<std::string>();
  }
  bool boolean(const std::string& key, bool fallback) {
    const json* v = take(key, false);
    if (!v) return fallback;
    if (!v->is_boolean()) bad_type(key, "true or false", *v);
    return v->get<bool>();
  }
  // pad_token_id may be null in HF configs (no padding index): -1 here.
  int64_t optional_token(const std::string& key, int64_t fallback) {
    const json* v = take(key, false);
    if (!v) return fallback;
    if (v->is_null()) return -1;
    if (!v->is_number_integer()) bad_type(key, "an integer or null", *v);
    return v->get<int64_t>();
  }

  void positive(const std::string& key, int64_t v) {
    if (v <= 0) fail(source_, ": field \"", key, "\" must be positive, saw ", v);
  }
  void probability(const std::string& key, double v) {
    if (!(v >= 0.0 && v < 1.0))
      fail(source_, ": field \"", key, "\" must be a dropout probability in [0, 1), saw ", v);
  }

  // Everything not consumed, for round-tripping.
  json rest() const {
    json extra = json::object();
    for (const auto& [k, v] : j_.items())
      if (!used_.count(k) && !kWriterOwned.count(k)) extra[k] = v;
    return extra;
  }
  const std::string& source() const { return source_; }

 private:
  const json* take(const std::string& key, bool required) {
    used_.insert(key);
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (required) fail(source_, ": missing required field \"", key, "\"");
      return nullptr;
    }
    return &*it;
  }
  [[noreturn]] void bad_type(const std::string& key, const char* expected, const json& v) {
    std::string seen = v.dump();
    if (seen.size() > 40) seen = seen.substr(0, 40) + "...";
    fail(source_, ": field \"", key, "\" must be ", expected, ", saw ", v.type_name(), " ", seen);
  }

  const json& j_;
  std::string source_;
  std::set<std::string> used_;
};

void check_common(const ModelConfig& c, Reader& r, const char* hidden, const char* heads, const char* act) {
  if (c.hidden_size % c.num_attention_heads != 0)
    fail(r.source(), ": \"", hidden, "\" ", c.hidden_size, " is not divisible by \"", heads, "\" ",
         c.num_attention_heads);
  try {
    kernels::activation_from_name(c.hidden_act);  // the activations the kernels implement
  } catch (const Error&) {
    fail(r.source(), ": field \"", act, "\" is \"", c.hidden_act,
         "\", expected gelu, gelu_new, gelu_pytorch_tanh or relu");
  }
  if (!(c.initializer_range >= 0.0 && std::isfinite(c.initializer_range)))
    fail(r.source(), ": field \"initializer_range\" must be a finite non-negative number, saw ",
         c.initializer_range);
  if (c.pad_token_id >= c.vocab_size)
    fail(r.source(), ": field \"pad_token_id\" ", c.pad_token_id, " is outside the vocabulary of ",
         c.vocab_size);
  if (c.pad_token_id < -1)
    fail(r.source(), ": field \"pad_token_id\" must be a token id or null, saw ", c.pad_token_id);
}

ModelConfig read_bert(Reader& r) {
  ModelConfig c;
  c.model_type = "bert";
  c.vocab_size = r.integer("vocab_size", true, 0);
  c.hidden_size = r.integer("hidden_size", true, 0);
  c.num_hidden_layers = r.integer("num_hidden_layers", true, 0);
  c.num_attention_heads = r.integer("num_attention_heads", true, 0);
  c.intermediate_size = r.integer("intermediate_size", true, 0);
  c.max_position_embeddings = r.integer("max_position_embeddings", true, 0);
  c.type_vocab_size = r.integer("type_vocab_size", true, 0);
  r.positive("vocab_size", c.vocab_size);
  r.positive("hidden_size", c.hidden_size);
  r.positive("num_hidden_layers", c.num_hidden_layers);
  r.positive("num_attention_heads", c.num_attention_heads);
  r.positive("intermediate_size", c.intermediate_size);
  r.positive("max_position_embeddings", c.max_position_embeddings);
  r.positive("type_vocab_size", c.type_vocab_size);
  c.hidden_act = r.string("hidden_act", false, "gelu");
  c.hidden_dropout_prob = r.number("hidden_dropout_prob", 0.1);
  c.attention_probs_dropout_prob = r.number("attention_probs_dropout_prob", 0.1);
  r.probability("hidden_dropout_prob", c.hidden_dropout_prob);
  r.probability("attention_probs_dropout_prob", c.attention_probs_dropout_prob);
  c.qa_dropout = 0.0;  // BertForQuestionAnswering has no dropout before qa_outputs
  c.initializer_range = r.number("initializer_range", 0.02);
  c.layer_norm_eps = r.number("layer_norm_eps", 1e-12);
  if (!(c.layer_norm_eps > 0.0 && std::isfinite(c.layer_norm_eps)))
    fail(r.source(), ": field \"layer_norm_eps\" must be a positive number, saw ", c.layer_norm_eps);
  c.pad_token_id = r.optional_token("pad_token_id", 0);
  // Changes the architecture: only absolute positions exist here (the writer emits "absolute").
  const std::string pos = r.string("position_embedding_type", false, "absolute");
  if (pos != "absolute")
    fail(r.source(), ": field \"position_embedding_type\" is \"", pos, "\", only \"absolute\" is supported");
  check_common(c, r, "hidden_size", "num_attention_heads", "hidden_act");
  return c;
}

ModelConfig read_distilbert(Reader& r) {
  ModelConfig c;
  c.model_type = "distilbert";
  c.vocab_size = r.integer("vocab_size", true, 0);
  c.hidden_size = r.integer("dim", true, 0);
  c.num_hidden_layers = r.integer("n_layers", true, 0);
  c.num_attention_heads = r.integer("n_heads", true, 0);
  c.intermediate_size = r.integer("hidden_dim", true, 0);
  c.max_position_embeddings = r.integer("max_position_embeddings", true, 0);
  r.positive("vocab_size", c.vocab_size);
  r.positive("dim", c.hidden_size);
  r.positive("n_layers", c.num_hidden_layers);
  r.positive("n_heads", c.num_attention_heads);
  r.positive("hidden_dim", c.intermediate_size);
  r.positive("max_position_embeddings", c.max_position_embeddings);
  c.type_vocab_size = 0;
  c.hidden_act = r.string("activation", false, "gelu");
  c.hidden_dropout_prob = r.number("dropout", 0.1);
  c.attention_probs_dropout_prob = r.number("attention_dropout", 0.1);
  c.qa_dropout = r.number("qa_dropout", 0.1);
  r.probability("dropout", c.hidden_dropout_prob);
  r.probability("attention_dropout", c.attention_probs_dropout_prob);
  r.probability("qa_dropout", c.qa_dropout);
  c.initializer_range = r.number("initializer_range", 0.02);
  c.layer_norm_eps = 1e-12;  // fixed in DistilBERT's modeling code, not a config field
  c.pad_token_id = r.optional_token("pad_token_id", 0);
  c.sinusoidal_pos_embds = r.boolean("sinusoidal_pos_embds", false);
  if (c.sinusoidal_pos_embds)
    fail(r.source(),
         ": field \"sinusoidal_pos_embds\" is true, only learned position embeddings are supported");
  check_common(c, r, "dim", "n_heads", "activation");
  return c;
}

}  // namespace

ModelConfig config_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) fail(source, ": config is a JSON ", j.type_name(), ", expected an object");
  Reader r(j, source);
  const std::string type = r.string("model_type", true, "");
  ModelConfig c;
  if (type == "bert") {
    c = read_bert(r);
  } else if (type == "distilbert") {
    c = read_distilbert(r);
  } else {
    fail(source, ": field \"model_type\" is \"", type, "\", expected \"bert\" or \"distilbert\"");
  }
  c.extra = r.rest();
  return c;
}

ModelConfig load_config(const std::string& path) {
  const std::string text = fs::read_file(path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    fail(path, ": not valid JSON (", e.what(), ")");
  }
  return config_from_json(j, path);
}

std::string config_to_json(const ModelConfig& c) {
  json j = c.extra.is_object() ? c.extra : json::object();
  for (const auto& k : kWriterOwned) j.erase(k);
  auto pad = [&]() { return c.pad_token_id < 0 ? json(nullptr) : json(c.pad_token_id); };
  j["model_type"] = c.model_type;
  j["torch_dtype"] = "float32";
  j["vocab_size"] = c.vocab_size;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["initializer_range"] = c.initializer_range;
  j["pad_token_id"] = pad();
  if (c.is_distilbert()) {
    j["architectures"] = json::array({"DistilBertForQuestionAnswering"});
    j["dim"] = c.hidden_size;
    j["n_layers"] = c.num_hidden_layers;
    j["n_heads"] = c.num_attention_heads;
    j["hidden_dim"] = c.intermediate_size;
    j["activation"] = c.hidden_act;
    j["dropout"] = c.hidden_dropout_prob;
    j["attention_dropout"] = c.attention_probs_dropout_prob;
    j["qa_dropout"] = c.qa_dropout;
    j["sinusoidal_pos_embds"] = c.sinusoidal_pos_embds;
    // DistilBertConfig attributes HF always writes.
    if (!j.contains("seq_classif_dropout")) j["seq_classif_dropout"] = 0.2;
    if (!j.contains("tie_weights_")) j["tie_weights_"] = true;
  } else {
    j["architectures"] = json::array({"BertForQuestionAnswering"});
    j["hidden_size"] = c.hidden_size;
    j["num_hidden_layers"] = c.num_hidden_layers;
    j["num_attention_heads"] = c.num_attention_heads;
    j["intermediate_size"] = c.intermediate_size;
    j["type_vocab_size"] = c.type_vocab_size;
    j["hidden_act"] = c.hidden_act;
    j["hidden_dropout_prob"] = c.hidden_dropout_prob;
    j["attention_probs_dropout_prob"] = c.attention_probs_dropout_prob;
    j["layer_norm_eps"] = c.layer_norm_eps;
    // BertConfig attributes HF always writes.
    if (!j.contains("position_embedding_type")) j["position_embedding_type"] = "absolute";
    if (!j.contains("use_cache")) j["use_cache"] = true;
    if (!j.contains("classifier_dropout")) j["classifier_dropout"] = nullptr;
  }
  return j.dump(2) + "\n";
}

}  // namespace ct::model

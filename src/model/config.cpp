// config.json reader/writer: translates each family's HF field names to and from ModelConfig, validating
// types and ranges so a bad config fails here, with its field named, and not deep in the model. BERT,
// RoBERTa (XLM-R, CamemBERT) and ELECTRA share BERT's field names; their differences are defaults and a
// few fields of their own.
#include "model/config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "core/error.h"
#include "core/fs.h"
#include "kernels/activation.h"
#include "model/config_fields.h"
#include "model/modernbert_config.h"

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
  // A number that may be null (classifier_dropout): `null_value` then.
  double optional_number(const std::string& key, double fallback, double null_value) {
    const json* v = take(key, false);
    if (!v) return fallback;
    if (v->is_null()) return null_value;
    if (!v->is_number()) bad_type(key, "a number or null", *v);
    return v->get<double>();
  }
  // A field looked at without being consumed (it still round-trips through `extra`).
  const json* peek(const std::string& key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
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
  // A size field: an integer, then > 0.
  int64_t size(const std::string& key, bool required = true, int64_t fallback = 0) {
    const int64_t v = integer(key, required, fallback);
    positive(key, v);
    return v;
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
  activation_field(r.source(), act, c.hidden_act, false);  // the activations the kernels implement
  if (!(c.initializer_range >= 0.0 && std::isfinite(c.initializer_range)))
    fail(r.source(), ": field \"initializer_range\" must be a finite non-negative number, saw ",
         c.initializer_range);
  if (c.pad_token_id >= c.vocab_size)
    fail(r.source(), ": field \"pad_token_id\" ", c.pad_token_id, " is outside the vocabulary of ",
         c.vocab_size);
  if (c.pad_token_id < -1)
    fail(r.source(), ": field \"pad_token_id\" must be a token id or null, saw ", c.pad_token_id);
}

// PretrainedConfig's head fields, common to every family.
void read_head_fields(ModelConfig& c, Reader& r) {
  if (const json* labels = r.peek("id2label")) {
    if (!labels->is_object() || labels->empty())
      fail(r.source(), ": field \"id2label\" must be a non-empty object of label names by id");
    c.num_labels = static_cast<int64_t>(labels->size());
  }
  if (r.peek("num_labels")) {
    c.num_labels = r.integer("num_labels", false, c.num_labels);
    r.positive("num_labels", c.num_labels);
  }
  const json* pt = r.peek("problem_type");
  if (pt && !pt->is_null()) {
    c.problem_type = r.string("problem_type", false, "");
    if (c.problem_type != "regression" && c.problem_type != "single_label_classification" &&
        c.problem_type != "multi_label_classification")
      fail(r.source(), ": field \"problem_type\" is \"", c.problem_type,
           "\", expected regression, single_label_classification or multi_label_classification");
  }  // null stays in `extra` and is written back as null
}

// ElectraConfig's SequenceSummary fields. summary_first_dropout and summary_proj_to_labels are no
// ElectraConfig attributes (SequenceSummary looks them up with hasattr): read where present, and left to
// round-trip as they came. Which values the multiple-choice head can run is checked where it is built
// (make_param_layout), so other heads load any of them.
void read_electra_summary(ModelConfig& c, Reader& r) {
  c.summary_type = r.string("summary_type", false, "first");
  c.summary_use_proj = r.boolean("summary_use_proj", true);
  if (const json* a = r.peek("summary_activation"); a && a->is_null()) {
    r.optional_number("summary_activation", 0.0, 0.0);  // consumed; the writer writes null back
    c.summary_activation.clear();
  } else {
    c.summary_activation = r.string("summary_activation", false, "gelu");
  }
  c.summary_last_dropout = r.number("summary_last_dropout", 0.1);
  r.probability("summary_last_dropout", c.summary_last_dropout);
  if (const json* v = r.peek("summary_first_dropout")) {
    if (!v->is_number())
      fail(r.source(), ": field \"summary_first_dropout\" must be a number, saw ", v->dump());
    c.summary_first_dropout = v->get<double>();
    r.probability("summary_first_dropout", c.summary_first_dropout);
  }
  if (const json* v = r.peek("summary_proj_to_labels")) {
    if (!v->is_boolean())
      fail(r.source(), ": field \"summary_proj_to_labels\" must be true or false, saw ", v->dump());
    c.summary_proj_to_labels = v->get<bool>();
  }
}

// BERT's field names: bert, roberta / xlm-roberta / camembert, electra.
ModelConfig read_bert_like(Reader& r, const std::string& type) {
  ModelConfig c;
  c.model_type = type;
  const bool roberta = c.is_roberta_like(), electra = c.is_electra();
  c.vocab_size = r.size("vocab_size");
  c.hidden_size = r.size("hidden_size");
  c.num_hidden_layers = r.size("num_hidden_layers");
  c.num_attention_heads = r.size("num_attention_heads");
  c.intermediate_size = r.size("intermediate_size");
  c.max_position_embeddings = r.size("max_position_embeddings");
  c.type_vocab_size = r.size("type_vocab_size");
  if (electra) {
    c.embedding_size = r.integer("embedding_size", false, 128);  // ElectraConfig's default
    r.positive("embedding_size", c.embedding_size);
    read_electra_summary(c, r);
  }
  c.hidden_act = r.string("hidden_act", false, "gelu");
  c.hidden_dropout_prob = r.number("hidden_dropout_prob", 0.1);
  c.attention_probs_dropout_prob = r.number("attention_probs_dropout_prob", 0.1);
  r.probability("hidden_dropout_prob", c.hidden_dropout_prob);
  r.probability("attention_probs_dropout_prob", c.attention_probs_dropout_prob);
  c.qa_dropout = 0.0;  // BertForQuestionAnswering (and RoBERTa's, ELECTRA's) has no dropout before qa_outputs
  c.classifier_dropout = r.optional_number("classifier_dropout", -1.0, -1.0);
  if (c.classifier_dropout != -1.0) r.probability("classifier_dropout", c.classifier_dropout);
  c.initializer_range = r.number("initializer_range", 0.02);
  c.layer_norm_eps = r.number("layer_norm_eps", 1e-12);
  if (!(c.layer_norm_eps > 0.0 && std::isfinite(c.layer_norm_eps)))
    fail(r.source(), ": field \"layer_norm_eps\" must be a positive number, saw ", c.layer_norm_eps);
  c.pad_token_id = r.optional_token("pad_token_id", roberta ? 1 : 0);  // RobertaConfig's default is 1
  if (roberta) {
    c.positions = PositionScheme::after_padding_idx;
    if (c.pad_token_id < 0)
      fail(r.source(), ": field \"pad_token_id\" is null, but ", type,
           " numbers positions from the padding index");
  }
  // Change the architecture: only absolute positions, and encoders, exist here (the writer emits
  // "absolute").
  const std::string pos = r.string("position_embedding_type", false, "absolute");
  if (pos != "absolute")
    fail(r.source(), ": field \"position_embedding_type\" is \"", pos, "\", only \"absolute\" is supported");
  for (const char* k : {"is_decoder", "add_cross_attention"})
    if (const json* v = r.peek(k); v && v->is_boolean() && v->get<bool>())
      fail(r.source(), ": field \"", k, "\" is true, only encoders are supported");
  read_head_fields(c, r);
  check_common(c, r, "hidden_size", "num_attention_heads", "hidden_act");
  return c;
}

ModelConfig read_distilbert(Reader& r) {
  ModelConfig c;
  c.model_type = "distilbert";
  c.vocab_size = r.size("vocab_size");
  c.hidden_size = r.size("dim");
  c.num_hidden_layers = r.size("n_layers");
  c.num_attention_heads = r.size("n_heads");
  c.intermediate_size = r.size("hidden_dim");
  c.max_position_embeddings = r.size("max_position_embeddings");
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
  c.seq_classif_dropout = r.number("seq_classif_dropout", 0.2);
  r.probability("seq_classif_dropout", c.seq_classif_dropout);
  read_head_fields(c, r);
  c.sinusoidal_pos_embds = r.boolean("sinusoidal_pos_embds", false);
  if (c.sinusoidal_pos_embds)
    fail(r.source(),
         ": field \"sinusoidal_pos_embds\" is true, only learned position embeddings are supported");
  check_common(c, r, "dim", "n_heads", "activation");
  return c;
}

// "a|b" lists of DebertaV2Config (pos_att_type, norm_rel_ebd): lower-cased, trimmed, empty items dropped.
std::vector<std::string> bar_list(const std::string& s) {
  std::vector<std::string> items;
  for (size_t b = 0; b <= s.size();) {
    const size_t e = std::min(s.find('|', b), s.size());
    std::string item = s.substr(b, e - b);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    for (char& ch : item) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!item.empty()) items.push_back(item);
    b = e + 1;
  }
  return items;
}

// DebertaV2Config: BERT's names plus the relative-attention fields; refuses what the DeBERTa body does not
// compute (ConvLayer, p2p, other head sizes, a pooler of another width) rather than running something else.
ModelConfig read_deberta(Reader& r) {
  ModelConfig c;
  c.model_type = "deberta-v2";
  c.vocab_size = r.size("vocab_size");
  c.hidden_size = r.size("hidden_size");
  c.num_hidden_layers = r.size("num_hidden_layers");
  c.num_attention_heads = r.size("num_attention_heads");
  c.intermediate_size = r.size("intermediate_size");
  c.max_position_embeddings = r.size("max_position_embeddings", false, 512);
  c.type_vocab_size = r.integer("type_vocab_size", false, 0);
  if (c.type_vocab_size < 0)
    fail(r.source(), ": field \"type_vocab_size\" must be >= 0, saw ", c.type_vocab_size);
  const int64_t emb = r.integer("embedding_size", false, c.hidden_size);
  r.positive("embedding_size", emb);
  c.embedding_size = emb == c.hidden_size ? 0 : emb;
  c.hidden_act = r.string("hidden_act", false, "gelu");
  c.hidden_dropout_prob = r.number("hidden_dropout_prob", 0.1);
  c.attention_probs_dropout_prob = r.number("attention_probs_dropout_prob", 0.1);
  r.probability("hidden_dropout_prob", c.hidden_dropout_prob);
  r.probability("attention_probs_dropout_prob", c.attention_probs_dropout_prob);
  c.qa_dropout = 0.0;
  c.classifier_dropout = r.optional_number("cls_dropout", -1.0, -1.0);
  if (c.classifier_dropout != -1.0) r.probability("cls_dropout", c.classifier_dropout);
  c.initializer_range = r.number("initializer_range", 0.02);
  c.layer_norm_eps = r.number("layer_norm_eps", 1e-7);
  if (!(c.layer_norm_eps > 0.0 && std::isfinite(c.layer_norm_eps)))
    fail(r.source(), ": field \"layer_norm_eps\" must be a positive number, saw ", c.layer_norm_eps);
  c.pad_token_id = r.optional_token("pad_token_id", 0);
  if (c.pad_token_id < 0)
    fail(r.source(), ": field \"pad_token_id\" is null, expected the padding token's id");
  c.relative_attention = r.boolean("relative_attention", false);
  c.max_relative_positions = r.integer("max_relative_positions", false, -1);
  c.position_buckets = r.integer("position_buckets", false, -1);
  c.share_att_key = r.boolean("share_att_key", false);
  c.position_biased_input = r.boolean("position_biased_input", true);
  c.legacy = r.boolean("legacy", true);
  // pos_att_type: a list, a "p2c|c2p" string (older configs) or null. Read by peeking: the writer sets it.
  if (const json* v = r.peek("pos_att_type"); v && !v->is_null()) {
    std::vector<std::string> items;
    if (v->is_string()) {
      items = bar_list(v->get<std::string>());
    } else if (v->is_array()) {
      for (const auto& it : *v) {
        if (!it.is_string()) fail(r.source(), ": field \"pos_att_type\" must list strings, saw ", it.dump());
        items.push_back(it.get<std::string>());
      }
    } else {
      fail(r.source(), ": field \"pos_att_type\" must be a list of \"c2p\"/\"p2c\", saw ", v->dump());
    }
    for (const auto& item : items)
      if (item != "c2p" && item != "p2c")
        fail(r.source(), ": field \"pos_att_type\" has \"", item, "\", expected only \"c2p\" and \"p2c\"");
    c.pos_att_type = items;
  }
  for (const auto& item : bar_list(r.string("norm_rel_ebd", false, "none"))) {
    if (item == "layer_norm")
      c.norm_rel_ebd = true;
    else if (item != "none")
      fail(r.source(), ": field \"norm_rel_ebd\" has \"", item, "\", expected \"layer_norm\" or \"none\"");
  }
  if (const json* v = r.peek("conv_kernel_size"); v && v->is_number() && v->get<double>() > 0)
    fail(r.source(), ": field \"conv_kernel_size\" is ", v->dump(),
         ", DeBERTa-v2's ConvLayer is not supported (expected 0 or absent)");
  if (!c.relative_attention && !c.pos_att_type.empty())
    fail(r.source(), ": field \"relative_attention\" is false but \"pos_att_type\" names position terms");
  if (c.relative_attention && c.position_buckets > 0) {
    const int64_t max_rel =
        c.max_relative_positions < 1 ? c.max_position_embeddings : c.max_relative_positions;
    if (c.position_buckets / 2 <= 1 || max_rel <= c.position_buckets / 2)
      fail(r.source(), ": field \"position_buckets\" ", c.position_buckets,
           " must be >= 4 and more than twice \"max_relative_positions\" apart (", max_rel, ")");
  }
  if (const json* v = r.peek("attention_head_size");
      v && v->is_number_integer() && v->get<int64_t>() * c.num_attention_heads != c.hidden_size)
    fail(r.source(), ": field \"attention_head_size\" ", v->dump(),
         " is not hidden_size / num_attention_heads, which is all that is supported");
  if (const json* v = r.peek("pooler_hidden_size");
      v && v->is_number_integer() && v->get<int64_t>() != c.hidden_size)
    fail(r.source(), ": field \"pooler_hidden_size\" ", v->dump(), " differs from hidden_size ",
         c.hidden_size, ", which is all that is supported");
  c.pooler_dropout = r.number("pooler_dropout", 0.0);
  r.probability("pooler_dropout", c.pooler_dropout);
  c.pooler_hidden_act = r.string("pooler_hidden_act", false, "gelu");
  try {
    kernels::activation_from_name(c.pooler_hidden_act);
  } catch (const Error&) {
    fail(r.source(), ": field \"pooler_hidden_act\" is \"", c.pooler_hidden_act,
         "\", expected gelu, gelu_new, gelu_pytorch_tanh, or relu");
  }
  read_head_fields(c, r);
  check_common(c, r, "hidden_size", "num_attention_heads", "hidden_act");
  return c;
}

}  // namespace

bool ModelConfig::has_c2p() const {
  return relative_attention &&
         std::find(pos_att_type.begin(), pos_att_type.end(), "c2p") != pos_att_type.end();
}
bool ModelConfig::has_p2c() const {
  return relative_attention &&
         std::find(pos_att_type.begin(), pos_att_type.end(), "p2c") != pos_att_type.end();
}
int64_t ModelConfig::relative_span() const {
  if (position_buckets > 0) return position_buckets;
  return max_relative_positions < 1 ? max_position_embeddings : max_relative_positions;
}

ModelConfig config_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) fail(source, ": config is a JSON ", j.type_name(), ", expected an object");
  Reader r(j, source);
  const std::string type = r.string("model_type", true, "");
  ModelConfig c;
  if (type == "bert" || type == "roberta" || type == "xlm-roberta" || type == "camembert" ||
      type == "electra") {
    c = read_bert_like(r, type);
  } else if (type == "distilbert") {
    c = read_distilbert(r);
  } else if (type == "modernbert") {
    return modernbert_config_from_json(j, source);
  } else if (type == "deberta-v2") {
    c = read_deberta(r);
  } else {
    fail(source, ": field \"model_type\" is \"", type,
         "\", expected bert, distilbert, roberta, xlm-roberta, camembert, electra, modernbert or deberta-v2");
  }
  if (const json* arch = r.peek("architectures"); arch && arch->is_array())
    for (const auto& a : *arch)
      if (a.is_string()) c.architectures.push_back(a.get<std::string>());
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

std::string ModelConfig::base_prefix() const {
  if (is_distilbert()) return "distilbert.";
  if (is_roberta_like()) return "roberta.";  // XLMRoberta and Camembert classes keep RoBERTa's prefix
  if (is_electra()) return "electra.";
  if (is_modernbert()) return "model.";
  if (is_deberta()) return "deberta.";
  return "bert.";
}

std::string ModelConfig::class_prefix() const {
  if (model_type == "distilbert") return "DistilBert";
  if (model_type == "roberta") return "Roberta";
  if (model_type == "xlm-roberta") return "XLMRoberta";
  if (model_type == "camembert") return "Camembert";
  if (model_type == "electra") return "Electra";
  if (model_type == "modernbert") return "ModernBert";
  if (model_type == "deberta-v2") return "DebertaV2";
  return "Bert";
}

HeadKind head_from_name(const std::string& name) {
  for (HeadKind h : {HeadKind::span, HeadKind::sequence_classification, HeadKind::token_classification,
                     HeadKind::masked_lm, HeadKind::multiple_choice})
    if (name == head_name(h)) return h;
  fail("head \"", name, "\" is not one of qa, seq-cls, token-cls, mlm, multiple-choice");
}

const char* head_name(HeadKind head) {
  switch (head) {
    case HeadKind::span:
      return "qa";
    case HeadKind::sequence_classification:
      return "seq-cls";
    case HeadKind::token_classification:
      return "token-cls";
    case HeadKind::masked_lm:
      return "mlm";
    case HeadKind::multiple_choice:
      return "multiple-choice";
  }
  return "qa";
}

const char* head_class_suffix(HeadKind head) {
  switch (head) {
    case HeadKind::span:
      return "ForQuestionAnswering";
    case HeadKind::sequence_classification:
      return "ForSequenceClassification";
    case HeadKind::token_classification:
      return "ForTokenClassification";
    case HeadKind::masked_lm:
      return "ForMaskedLM";
    case HeadKind::multiple_choice:
      return "ForMultipleChoice";
  }
  return "ForQuestionAnswering";
}

HeadKind head_from_architectures(const ModelConfig& c, HeadKind fallback) {
  for (const auto& a : c.architectures)
    for (HeadKind h : {HeadKind::span, HeadKind::sequence_classification, HeadKind::token_classification,
                       HeadKind::masked_lm, HeadKind::multiple_choice}) {
      const std::string suffix = head_class_suffix(h);
      if (a.size() > suffix.size() && a.compare(a.size() - suffix.size(), suffix.size(), suffix) == 0)
        return h;
    }
  return fallback;
}

namespace {

// DebertaV2Config's own fields (BERT's shared ones are written by the caller).
void write_deberta(nlohmann::json& j, const ModelConfig& c) {
  j["embedding_size"] = c.embedding_width();
  j["relative_attention"] = c.relative_attention;
  j["max_relative_positions"] = c.max_relative_positions;
  j["position_buckets"] = c.position_buckets;
  j["pos_att_type"] = c.pos_att_type;
  j["share_att_key"] = c.share_att_key;
  j["norm_rel_ebd"] = c.norm_rel_ebd ? "layer_norm" : "none";
  j["position_biased_input"] = c.position_biased_input;
  j["pooler_hidden_size"] = c.hidden_size;
  j["pooler_dropout"] = c.pooler_dropout;
  j["pooler_hidden_act"] = c.pooler_hidden_act;
  j["legacy"] = c.legacy;
  if (c.classifier_dropout >= 0.0) j["cls_dropout"] = c.classifier_dropout;
}

}  // namespace

std::string config_to_json(const ModelConfig& c, HeadKind head) {
  json j = c.extra.is_object() ? c.extra : json::object();
  for (const auto& k : kWriterOwned) j.erase(k);
  auto pad = [&]() { return c.pad_token_id < 0 ? json(nullptr) : json(c.pad_token_id); };
  j["model_type"] = c.model_type;
  j["torch_dtype"] = "float32";
  j["vocab_size"] = c.vocab_size;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["initializer_range"] = c.initializer_range;
  j["pad_token_id"] = pad();
  j["architectures"] = json::array({c.class_prefix() + head_class_suffix(head)});
  if (!c.problem_type.empty()) j["problem_type"] = c.problem_type;
  // id2label/label2id round-trip from the file unless num_labels changed them (PretrainedConfig then makes
  // LABEL_i names).
  const bool stale = !j.contains("id2label") || !j["id2label"].is_object() ||
                     static_cast<int64_t>(j["id2label"].size()) != c.num_labels;
  if (stale && (head == HeadKind::sequence_classification || head == HeadKind::token_classification ||
                j.contains("id2label"))) {
    json id2label = json::object(), label2id = json::object();
    for (int64_t i = 0; i < c.num_labels; ++i) {
      id2label[std::to_string(i)] = "LABEL_" + std::to_string(i);
      label2id["LABEL_" + std::to_string(i)] = i;
    }
    j["id2label"] = id2label;
    j["label2id"] = label2id;
  }
  if (c.is_modernbert()) {
    write_modernbert_fields(c, j);
  } else if (c.is_distilbert()) {
    j["dim"] = c.hidden_size;
    j["n_layers"] = c.num_hidden_layers;
    j["n_heads"] = c.num_attention_heads;
    j["hidden_dim"] = c.intermediate_size;
    j["activation"] = c.hidden_act;
    j["dropout"] = c.hidden_dropout_prob;
    j["attention_dropout"] = c.attention_probs_dropout_prob;
    j["qa_dropout"] = c.qa_dropout;
    j["sinusoidal_pos_embds"] = c.sinusoidal_pos_embds;
    j["seq_classif_dropout"] = c.seq_classif_dropout;
    // DistilBertConfig attributes HF always writes.
    if (!j.contains("tie_weights_")) j["tie_weights_"] = true;
  } else {
    j["hidden_size"] = c.hidden_size;
    if (c.is_electra()) {
      j["embedding_size"] = c.embedding_size;
      j["summary_type"] = c.summary_type;
      j["summary_use_proj"] = c.summary_use_proj;
      j["summary_activation"] = c.summary_activation.empty() ? json(nullptr) : json(c.summary_activation);
      j["summary_last_dropout"] = c.summary_last_dropout;
    }
    j["num_hidden_layers"] = c.num_hidden_layers;
    j["num_attention_heads"] = c.num_attention_heads;
    j["intermediate_size"] = c.intermediate_size;
    j["type_vocab_size"] = c.type_vocab_size;
    j["hidden_act"] = c.hidden_act;
    j["hidden_dropout_prob"] = c.hidden_dropout_prob;
    j["attention_probs_dropout_prob"] = c.attention_probs_dropout_prob;
    j["layer_norm_eps"] = c.layer_norm_eps;
    if (c.is_deberta()) {
      write_deberta(j, c);
      return j.dump(2) + "\n";
    }
    // BertConfig attributes HF always writes.
    if (!j.contains("position_embedding_type")) j["position_embedding_type"] = "absolute";
    if (!j.contains("use_cache")) j["use_cache"] = true;
    j["classifier_dropout"] = c.classifier_dropout >= 0.0 ? json(c.classifier_dropout) : json(nullptr);
  }
  return j.dump(2) + "\n";
}

}  // namespace ct::model

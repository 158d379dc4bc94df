// config.json of the decoder families into DecoderConfig: each family's field names and defaults (GPT-2's
// n_*, the Llama family's, Gemma 3's extras), the RoPE forms of transformers 4.x and 5.x, and the layer
// types.
#include "model/decoder_config.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "core/fs.h"
#include "model/config_fields.h"

namespace ct::model {

namespace {

using nlohmann::json;

struct FamilyDefaults {
  const char* name;
  DecoderFamily family;
  bool tie;
  int64_t max_positions;
};

constexpr FamilyDefaults kFamilies[] = {
    {"gpt2", DecoderFamily::gpt2, true, 1024},
    {"llama", DecoderFamily::llama, false, 2048},
    {"mistral", DecoderFamily::mistral, false, 4096 * 32},
    {"qwen2", DecoderFamily::qwen2, false, 32768},
    {"qwen3", DecoderFamily::qwen3, false, 32768},
    {"gemma3_text", DecoderFamily::gemma3_text, true, 131072},
};

const FamilyDefaults* family_of(const std::string& model_type) {
  for (const auto& f : kFamilies)
    if (model_type == f.name) return &f;
  return nullptr;
}

double num(const json& o, const char* key, double fallback, const std::string& where) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return fallback;
  if (!it->is_number()) fail(where, ".", key, " must be a number, saw ", it->dump());
  return it->get<double>();
}

// A rope_scaling / rope_parameters object (either may also carry rope_theta in 5.x).
}  // namespace

RopeSpec rope_spec_from_json(const json* p, double theta, int64_t max_positions, const std::string& where) {
  RopeSpec r;
  r.theta = theta;
  if (!p) return r;
  if (!p->is_object()) fail(where, " must be an object, saw ", p->dump());
  r.theta = num(*p, "rope_theta", theta, where);
  if (auto it = p->find("rope_type"); it != p->end() && it->is_string())
    r.type = it->get<std::string>();
  else if (auto t = p->find("type"); t != p->end() && t->is_string())
    r.type = t->get<std::string>();
  if (r.type != "default" && r.type != "linear" && r.type != "dynamic" && r.type != "yarn" &&
      r.type != "llama3")
    fail(where, ".rope_type is \"", r.type, "\", expected default, linear, dynamic, yarn or llama3");
  r.partial_rotary_factor = num(*p, "partial_rotary_factor", 1.0, where);
  r.original_max_positions = static_cast<int64_t>(
      num(*p, "original_max_position_embeddings", static_cast<double>(max_positions), where));
  const bool needs_factor = r.type == "linear" || r.type == "dynamic" || r.type == "llama3";
  if (needs_factor && (p->find("factor") == p->end() || (*p)["factor"].is_null()))
    fail(where, ".factor is missing (rope_type ", r.type, " needs it)");
  const double default_factor =
      r.type == "yarn" ? static_cast<double>(max_positions) / static_cast<double>(r.original_max_positions)
                       : 1.0;
  r.factor = num(*p, "factor", default_factor, where);
  if (!(r.factor >= 1.0) && r.type != "default") fail(where, ".factor must be >= 1, saw ", r.factor);
  r.low_freq_factor = num(*p, "low_freq_factor", 1.0, where);
  r.high_freq_factor = num(*p, "high_freq_factor", 4.0, where);
  if (r.type == "llama3" && !(r.high_freq_factor > r.low_freq_factor))
    fail(where, ".high_freq_factor must exceed low_freq_factor");
  r.beta_fast = num(*p, "beta_fast", 32.0, where);
  r.beta_slow = num(*p, "beta_slow", 1.0, where);
  r.attention_factor = num(*p, "attention_factor", 0.0, where);
  r.mscale = num(*p, "mscale", 0.0, where);
  r.mscale_all_dim = num(*p, "mscale_all_dim", 0.0, where);
  if (auto it = p->find("truncate"); it != p->end() && it->is_boolean()) r.truncate = it->get<bool>();
  return r;
}

namespace {

// Sliding or full per layer: layer_types when the file has it, else the family's rule.
std::vector<bool> sliding_layers(ConfigFields& f, const DecoderConfig& c, bool window_on,
                                 int64_t max_window_layers, int64_t pattern) {
  std::vector<bool> sliding(c.num_layers, false);
  if (const json* lt = f.find("layer_types")) {
    f.use("layer_types");
    if (!lt->is_array() || static_cast<int64_t>(lt->size()) != c.num_layers)
      fail(f.source(), ": field \"layer_types\" must list ", c.num_layers, " layer types");
    for (int64_t i = 0; i < c.num_layers; ++i) {
      const json& t = (*lt)[i];
      const std::string s = t.is_string() ? t.get<std::string>() : t.dump();
      if (s != "full_attention" && s != "sliding_attention")
        fail(f.source(), ": field \"layer_types\"[", i, "] is ", s,
             ", expected \"full_attention\" or \"sliding_attention\"");
      sliding[i] = s == "sliding_attention";
    }
    return sliding;
  }
  if (!window_on) return sliding;
  for (int64_t i = 0; i < c.num_layers; ++i)
    sliding[i] = pattern > 0 ? (i + 1) % pattern != 0 : i >= max_window_layers;
  return sliding;
}

void read_token_ids(DecoderConfig& c, ConfigFields& f) {
  c.bos_token_id = f.integer("bos_token_id", false, -1);
  c.pad_token_id = f.integer("pad_token_id", false, -1);
  f.use("eos_token_id");
  if (const json* e = f.find("eos_token_id")) {
    if (e->is_number_integer()) {
      c.eos_token_ids.push_back(e->get<int64_t>());
    } else if (e->is_array()) {
      for (const auto& x : *e) {
        if (!x.is_number_integer()) fail(f.source(), ": field \"eos_token_id\" must hold token ids");
        c.eos_token_ids.push_back(x.get<int64_t>());
      }
    } else {
      fail(f.source(), ": field \"eos_token_id\" must be a token id or a list of them");
    }
  }
  for (int64_t id : c.eos_token_ids)
    if (id < 0 || id >= c.vocab_size)
      fail(f.source(), ": field \"eos_token_id\" ", id, " is outside the vocabulary of ", c.vocab_size);
}

void read_gpt2(DecoderConfig& c, ConfigFields& f) {
  c.vocab_size = f.positive("vocab_size", false, 50257);
  c.max_positions = f.positive("n_positions", false, 1024);
  c.hidden_size = f.positive("n_embd", false, 768);
  c.num_layers = f.positive("n_layer", false, 12);
  c.num_heads = f.positive("n_head", false, 12);
  c.num_kv_heads = c.num_heads;
  c.intermediate_size = f.positive("n_inner", false, 4 * c.hidden_size);
  c.hidden_act = f.string("activation_function", "gelu_new");
  c.act = activation_field(f.source(), "activation_function", c.hidden_act, true);
  c.norm = DecoderNorm::layernorm;
  c.norm_eps = f.number("layer_norm_epsilon", 1e-5);
  c.resid_dropout = f.probability("resid_pdrop");
  c.embd_dropout = f.probability("embd_pdrop");
  c.attn_dropout = f.probability("attn_pdrop");
  // GPT2Config's dropout defaults are 0.1; probability() reads an absent field as 0.
  if (!f.find("resid_pdrop")) c.resid_dropout = 0.1;
  if (!f.find("embd_pdrop")) c.embd_dropout = 0.1;
  if (!f.find("attn_pdrop")) c.attn_dropout = 0.1;
  f.only("scale_attn_by_inverse_layer_idx", false, false, "scores are not divided by the layer index");
  f.only("reorder_and_upcast_attn", false, false, "GPT-2's f32 score path is not implemented");
  f.only("add_cross_attention", false, false, "a decoder-only model has no cross-attention");
  if (c.hidden_size % c.num_heads != 0)
    fail(f.source(), ": \"n_embd\" ", c.hidden_size, " is not divisible by \"n_head\" ", c.num_heads);
  c.head_dim = c.hidden_size / c.num_heads;
  const json* scale = f.find("scale_attn_weights");
  f.use("scale_attn_weights");
  const bool scaled = !scale || (scale->is_boolean() && scale->get<bool>());
  c.score_scale = scaled ? 1.0f / std::sqrt(static_cast<float>(c.head_dim)) : 1.0f;
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.learned_positions = c.conv1d = true;
}

void read_llama_like(DecoderConfig& c, ConfigFields& f) {
  const bool gemma = c.family == DecoderFamily::gemma3_text;
  c.vocab_size = f.positive("vocab_size", true, 0);
  c.hidden_size = f.positive("hidden_size", true, 0);
  c.intermediate_size = f.positive("intermediate_size", true, 0);
  c.num_layers = f.positive("num_hidden_layers", true, 0);
  c.num_heads = f.positive("num_attention_heads", true, 0);
  c.num_kv_heads = f.positive("num_key_value_heads", false, c.num_heads);
  if (c.num_heads % c.num_kv_heads != 0)
    fail(f.source(), ": \"num_attention_heads\" ", c.num_heads,
         " is not a multiple of \"num_key_value_heads\" ", c.num_kv_heads);
  if (!gemma && !f.find("head_dim") && c.hidden_size % c.num_heads != 0)
    fail(f.source(), ": \"hidden_size\" ", c.hidden_size, " is not divisible by \"num_attention_heads\" ",
         c.num_heads, " and there is no \"head_dim\"");
  c.head_dim = f.positive("head_dim", false, gemma ? 256 : c.hidden_size / c.num_heads);
  c.norm = gemma ? DecoderNorm::rms_unit_offset : DecoderNorm::rms;
  c.norm_eps = f.number("rms_norm_eps", 1e-6);
  const char* act_key = gemma ? "hidden_activation" : "hidden_act";
  c.hidden_act = f.string(act_key, gemma ? "gelu_pytorch_tanh" : "silu");
  if (gemma) f.use("hidden_act");  // Gemma3TextConfig keeps it only for backward compatibility
  c.act = activation_field(f.source(), act_key, c.hidden_act, true);
  c.attn_dropout = f.probability("attention_dropout");
  const bool attention_bias = f.find("attention_bias") && f.find("attention_bias")->is_boolean() &&
                              f.find("attention_bias")->get<bool>();
  f.use("attention_bias");
  c.qkv_bias = attention_bias || c.family == DecoderFamily::qwen2;
  c.o_bias = attention_bias && c.family != DecoderFamily::qwen2;
  c.mlp_bias = f.find("mlp_bias") && f.find("mlp_bias")->is_boolean() && f.find("mlp_bias")->get<bool>();
  f.use("mlp_bias");
  if (c.mlp_bias && c.family != DecoderFamily::llama)
    fail(f.source(), ": field \"mlp_bias\" is true, which only llama's MLP implements");
  c.qk_norm = c.family == DecoderFamily::qwen3 || gemma;
  c.score_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  if (gemma) {
    c.sandwich_norms = true;
    c.embed_scale = std::sqrt(static_cast<float>(c.hidden_size));
    const double qpas = f.number("query_pre_attn_scalar", 256.0);
    if (!(qpas > 0)) fail(f.source(), ": field \"query_pre_attn_scalar\" must be positive, saw ", qpas);
    c.score_scale = static_cast<float>(std::pow(qpas, -0.5));
    if (f.find("final_logit_softcapping"))
      fail(f.source(), ": field \"final_logit_softcapping\" is set; logit softcapping is not implemented");
    f.use("final_logit_softcapping");
    f.use("attn_logit_softcapping");  // stored by Gemma3TextConfig, not applied by its attention
    f.only("use_bidirectional_attention", false, false, "a causal LM attends causally");
  } else {
    // Llama's score factor is head_dim**-0.5 as a Python float.
    c.score_scale = static_cast<float>(std::pow(static_cast<double>(c.head_dim), -0.5));
  }
}

// RoPE and layer types of the Llama family and Gemma 3.
void read_attention_layout(DecoderConfig& c, ConfigFields& f) {
  const bool gemma = c.family == DecoderFamily::gemma3_text;
  const json* params = f.find("rope_parameters");
  const json* scaling = f.find("rope_scaling");
  f.use("rope_parameters");
  f.use("rope_scaling");
  const double theta = f.number("rope_theta", gemma ? 1e6 : 10000.0);
  int64_t window = 0;
  bool window_on = false;
  int64_t max_window_layers = 0, pattern = 0;
  if (c.family == DecoderFamily::mistral) {
    window = f.integer("sliding_window", false, 0);
    window_on = window > 0;
  } else if (c.family == DecoderFamily::qwen2 || c.family == DecoderFamily::qwen3) {
    const json* use = f.find("use_sliding_window");
    f.use("use_sliding_window");
    window_on = use && use->is_boolean() && use->get<bool>();
    window = f.integer("sliding_window", false, 4096);
    max_window_layers = f.integer("max_window_layers", false, 28);
  } else if (gemma) {
    window = f.integer("sliding_window", false, 4096);
    window_on = true;
    pattern = f.integer("sliding_window_pattern", false, 0);
    if (!pattern) pattern = f.integer("_sliding_window_pattern", false, 6);
    if (pattern <= 0) fail(f.source(), ": field \"sliding_window_pattern\" must be positive, saw ", pattern);
  } else {
    f.use("sliding_window");
  }
  std::vector<bool> sliding = sliding_layers(f, c, window_on, max_window_layers, pattern);
  // Qwen2/Qwen3 set sliding_window to None unless use_sliding_window, whatever layer_types says.
  const bool qwen = c.family == DecoderFamily::qwen2 || c.family == DecoderFamily::qwen3;
  if (qwen && !window_on) sliding.assign(sliding.size(), false);
  if (std::any_of(sliding.begin(), sliding.end(), [](bool s) { return s; }) && window <= 0)
    fail(f.source(), ": field \"sliding_window\" must be a positive length when layers slide, saw ", window);
  const std::string src = f.source();
  if (gemma) {
    // Two RoPEs: full layers (rope_theta with rope_scaling), sliding layers (rope_local_base_freq, unscaled).
    const double local = f.number("rope_local_base_freq", 10000.0);
    if (params && params->contains("full_attention")) {
      const json& full = (*params)["full_attention"];
      const json* slide = params->contains("sliding_attention") ? &(*params)["sliding_attention"] : nullptr;
      c.ropes.push_back(
          rope_spec_from_json(&full, theta, c.max_positions, src + ": rope_parameters.full_attention"));
      c.ropes.push_back(
          rope_spec_from_json(slide, local, c.max_positions, src + ": rope_parameters.sliding_attention"));
    } else {
      c.ropes.push_back(rope_spec_from_json(params ? params : scaling, theta, c.max_positions,
                                            src + (params ? ": rope_parameters" : ": rope_scaling")));
      c.ropes.push_back(rope_spec_from_json(nullptr, local, c.max_positions, src));
    }
  } else {
    c.ropes.push_back(rope_spec_from_json(params ? params : scaling, theta, c.max_positions,
                                          src + (params ? ": rope_parameters" : ": rope_scaling")));
  }
  c.layers.resize(c.num_layers);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    c.layers[i].window = sliding[i] ? window : 0;
    c.layers[i].rope = gemma && sliding[i] ? 1 : 0;
  }
}

}  // namespace

bool is_decoder_model_type(const std::string& model_type) {
  return family_of(model_type) != nullptr;
}

DecoderConfig decoder_config_from_json(const json& j, const std::string& source) {
  CT_CHECK(j.is_object(), source, ": expected a JSON object");
  ConfigFields f(j, source);
  DecoderConfig c;
  c.model_type = f.string("model_type", "");
  const FamilyDefaults* fam = family_of(c.model_type);
  if (!fam)
    fail(source, ": field \"model_type\" is \"", c.model_type,
         "\", expected a decoder: gpt2, llama, mistral, qwen2, qwen3 or gemma3_text");
  c.family = fam->family;
  for (const char* moe : {"num_experts", "num_local_experts", "n_routed_experts"})
    if (const json* v = f.find(moe); v && v->is_number_integer() && v->get<int64_t>() > 0)
      fail(source, ": field \"", moe, "\" is set; mixture-of-experts layers are not implemented");
  if (c.family == DecoderFamily::gpt2) {
    read_gpt2(c, f);
  } else {
    c.max_positions = f.positive("max_position_embeddings", false, fam->max_positions);
    read_llama_like(c, f);
    read_attention_layout(c, f);
  }
  const json* tie = f.find("tie_word_embeddings");
  f.use("tie_word_embeddings");
  c.tie_word_embeddings = tie && tie->is_boolean() ? tie->get<bool>() : fam->tie;
  c.initializer_range = f.number("initializer_range", 0.02);
  if (!(c.initializer_range >= 0.0 && std::isfinite(c.initializer_range)))
    fail(source, ": field \"initializer_range\" must be a finite non-negative number, saw ",
         c.initializer_range);
  if (!(c.norm_eps > 0.0)) fail(source, ": the norm's eps must be positive, saw ", c.norm_eps);
  read_token_ids(c, f);
  for (const char* k : {"dtype", "torch_dtype", "transformers_version", "use_cache", "architectures"})
    f.use(k);
  c.extra = f.rest();
  c.file = j;
  return c;
}

std::string decoder_architecture(const DecoderConfig& c) {
  switch (c.family) {
    case DecoderFamily::gpt2:
      return "GPT2LMHeadModel";
    case DecoderFamily::llama:
      return "LlamaForCausalLM";
    case DecoderFamily::mistral:
      return "MistralForCausalLM";
    case DecoderFamily::qwen2:
      return "Qwen2ForCausalLM";
    case DecoderFamily::qwen3:
      return "Qwen3ForCausalLM";
    case DecoderFamily::gemma3_text:
      return "Gemma3ForCausalLM";
  }
  return "";
}

json decoder_config_to_json(const DecoderConfig& c) {
  json j = c.file.is_object() ? c.file : json::object();
  j["model_type"] = c.model_type;
  j["architectures"] = json::array({decoder_architecture(c)});
  j["vocab_size"] = c.vocab_size;
  // 4.x files name the dtype torch_dtype, 5.x dtype; the weights are written as f32.
  j[j.contains("dtype") ? "dtype" : "torch_dtype"] = "float32";
  return j;
}

DecoderConfig load_decoder_config(const std::string& path) {
  json j;
  try {
    j = json::parse(fs::read_file(path));
  } catch (const json::exception& e) {
    fail(path, ": malformed JSON (", e.what(), ")");
  }
  return decoder_config_from_json(j, path);
}

RopeFrequencies rope_frequencies(const RopeSpec& r, int64_t head_dim, int64_t max_positions,
                                 int64_t seq_len) {
  const int64_t d = static_cast<int64_t>(static_cast<double>(head_dim) * r.partial_rotary_factor);
  CT_CHECK(d >= 2 && d % 2 == 0, "RoPE: rotary dimension ", d, " (head_dim ", head_dim,
           " x partial_rotary_factor ", r.partial_rotary_factor, ") must be even and positive");
  double base = r.theta;
  if (r.type == "dynamic") {
    const double L = static_cast<double>(std::max(seq_len, max_positions));
    base = base * std::pow(r.factor * L / static_cast<double>(max_positions) - (r.factor - 1.0),
                           static_cast<double>(d) / static_cast<double>(d - 2));
  }
  const int64_t half = d / 2;
  RopeFrequencies out;
  out.inv_freq.resize(half);
  std::vector<float> pos(half);  // base ** (2i / d), f32 as torch computes it
  for (int64_t i = 0; i < half; ++i) {
    pos[i] = std::pow(static_cast<float>(base), static_cast<float>(2 * i) / static_cast<float>(d));
    out.inv_freq[i] = 1.0f / pos[i];
  }
  const float factor = static_cast<float>(r.factor);
  if (r.type == "linear") {
    for (float& x : out.inv_freq) x /= factor;
  } else if (r.type == "llama3") {
    const double omax = static_cast<double>(r.original_max_positions);
    const float low_wavelen = static_cast<float>(omax / r.low_freq_factor);
    const float high_wavelen = static_cast<float>(omax / r.high_freq_factor);
    const float lf = static_cast<float>(r.low_freq_factor), hf = static_cast<float>(r.high_freq_factor);
    for (float& inv : out.inv_freq) {
      const float wavelen = static_cast<float>(2.0 * std::numbers::pi) / inv;
      float x = wavelen > low_wavelen ? inv / factor : inv;
      const float smooth = (static_cast<float>(omax) / wavelen - lf) / (hf - lf);
      const float smoothed = (1.0f - smooth) * x / factor + smooth * x;
      if (!(wavelen < high_wavelen) && !(wavelen > low_wavelen)) x = smoothed;
      inv = x;
    }
  } else if (r.type == "yarn") {
    auto mscale = [](double scale, double m) { return scale <= 1.0 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; };
    double attention = r.attention_factor;
    if (attention == 0.0) {
      attention = r.mscale != 0.0 && r.mscale_all_dim != 0.0
                      ? mscale(r.factor, r.mscale) / mscale(r.factor, r.mscale_all_dim)
                      : mscale(r.factor, 1.0);
    }
    out.attention_scaling = static_cast<float>(attention);
    const double omax = static_cast<double>(r.original_max_positions);
    auto correction_dim = [&](double rotations) {
      return (static_cast<double>(d) * std::log(omax / (rotations * 2.0 * std::numbers::pi))) /
             (2.0 * std::log(base));
    };
    double low = correction_dim(r.beta_fast), high = correction_dim(r.beta_slow);
    if (r.truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, static_cast<double>(d - 1));
    if (low == high) high += 0.001;
    const float lo = static_cast<float>(low), span = static_cast<float>(high - low);
    for (int64_t i = 0; i < half; ++i) {
      const float ramp = std::clamp((static_cast<float>(i) - lo) / span, 0.0f, 1.0f);
      const float extrapolation = 1.0f - ramp;
      const float interp = 1.0f / (factor * pos[i]);
      out.inv_freq[i] = interp * (1.0f - extrapolation) + out.inv_freq[i] * extrapolation;
    }
  }
  return out;
}

}  // namespace ct::model

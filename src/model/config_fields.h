// config.json fields by name for the readers that keep what they do not consume: typed getters that name the
// file and field in their errors (a null field reads as absent, as transformers' defaults apply), options of
// which only one value is implemented, and the unconsumed rest for round-tripping into `extra`.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "kernels/activation.h"

namespace ct::model {

class ConfigFields {
 public:
  using json = nlohmann::json;

  ConfigFields(const json& j, const std::string& source) : j_(j), source_(source) {}

  const json* find(const std::string& key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  int64_t integer(const std::string& key, bool required, int64_t fallback) {
    used_.insert(key);
    const json* v = find(key);
    if (!v) {
      if (required) fail(source_, ": missing required field \"", key, "\"");
      return fallback;
    }
    if (!v->is_number_integer()) bad(key, "an integer", *v);
    return v->get<int64_t>();
  }
  int64_t positive(const std::string& key, bool required, int64_t fallback) {
    const int64_t v = integer(key, required, fallback);
    if (v <= 0) fail(source_, ": field \"", key, "\" must be positive, saw ", v);
    return v;
  }
  double number(const std::string& key, double fallback) {
    used_.insert(key);
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_number()) bad(key, "a number", *v);
    return v->get<double>();
  }
  double probability(const std::string& key) {
    const double p = number(key, 0.0);
    if (!(p >= 0.0 && p < 1.0))
      fail(source_, ": field \"", key, "\" must be a dropout probability in [0, 1), saw ", p);
    return p;
  }
  std::string string(const std::string& key, const std::string& fallback) {
    used_.insert(key);
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_string()) bad(key, "a string", *v);
    return v->get<std::string>();
  }
  // A boolean option of which only `supported` is implemented; left in `extra` (it round-trips as read).
  void only(const std::string& key, bool fallback, bool supported, const char* why) {
    const json* v = find(key);
    if (v && !v->is_boolean()) bad(key, "true or false", *v);
    const bool value = v ? v->get<bool>() : fallback;
    if (value != supported)
      fail(source_, ": field \"", key, "\" is ", value ? "true" : "false", ", only ",
           supported ? "true" : "false", " is supported (", why, ")");
  }
  json rest() const {
    json extra = json::object();
    for (const auto& [k, v] : j_.items())
      if (!used_.count(k) && k != "architectures" && k != "torch_dtype" && k != "model_type") extra[k] = v;
    return extra;
  }
  void use(const std::string& key) { used_.insert(key); }
  const std::string& source() const { return source_; }

 private:
  [[noreturn]] void bad(const std::string& key, const char* expected, const json& v) const {
    std::string seen = v.dump();
    if (seen.size() > 40) seen = seen.substr(0, 40) + "...";
    fail(source_, ": field \"", key, "\" must be ", expected, ", saw ", v.type_name(), " ", seen);
  }

  const json& j_;
  std::string source_;
  std::set<std::string> used_;
};

// An activation field (hidden_act, hidden_activation, ...) as the kernels implement it; a name they do not is
// an error naming the file and the field. Encoders take the GELU forms and ReLU (their bodies and heads are
// checked against transformers with those); decoders also SiLU.
inline kernels::Activation activation_field(const std::string& source, const char* key,
                                            const std::string& name, bool decoder) {
  const char* expected = decoder ? "gelu, gelu_new, gelu_pytorch_tanh, relu or silu"
                                 : "gelu, gelu_new, gelu_pytorch_tanh or relu";
  kernels::Activation a = kernels::Activation::gelu;
  try {
    a = kernels::activation_from_name(name);
  } catch (const Error&) {
    fail(source, ": field \"", key, "\" is \"", name, "\", expected ", expected);
  }
  if (a == kernels::Activation::silu && !decoder)
    fail(source, ": field \"", key, "\" is \"", name, "\", expected ", expected);
  return a;
}

}  // namespace ct::model

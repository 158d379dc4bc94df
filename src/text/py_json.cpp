// json.loads-shaped values and json.dumps' exact output; see py_json.h.
#include "text/py_json.h"

#include <algorithm>
#include <cmath>

#include "text/jinja_error.h"
#include "text/py_text.h"
#include "text/unicode.h"

namespace ct::text::py {

using jinja::Kind;
using jinja::Value;

Value from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value::none();
    case nlohmann::ordered_json::value_t::boolean:
      return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX))
        jinja::raise("integer " + std::to_string(u) + " is too large");
      return Value::integer(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value::number(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      jinja::List items;
      items.reserve(j.size());
      for (const auto& x : j) items.push_back(from_json(x));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      jinja::Dict d;
      d.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it)
        d.emplace_back(Value::string(it.key()), from_json(it.value()));
      return Value::dict(std::move(d));
    }
    default:
      jinja::raise("unsupported JSON value (binary or discarded)");
  }
}

static void dump_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out.push_back('"');
  static const char* kHex = "0123456789abcdef";
  auto u4 = [&](unsigned c) {
    out += "\\u";
    for (int k = 3; k >= 0; --k) out.push_back(kHex[(c >> (4 * k)) & 0xF]);
  };
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    const char32_t c = decode_utf8(s.data() + i, s.size() - i, len);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          u4(c);
        } else if (c >= 0x80 && ensure_ascii) {
          if (c >= 0x10000) {
            const char32_t v = c - 0x10000;
            u4(0xD800 | (v >> 10));
            u4(0xDC00 | (v & 0x3FF));
          } else {
            u4(c);
          }
        } else {
          out.append(s, i, len);
        }
    }
    i += len;
  }
  out.push_back('"');
}

static std::string float_json(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
  return jinja::float_repr(d);
}

static std::string key_string(const Value& k) {
  switch (k.kind()) {
    case Kind::kString:
      return k.as_string();
    case Kind::kBool:
      return k.as_bool() ? "true" : "false";
    case Kind::kNone:
      return "null";
    case Kind::kInt:
      return std::to_string(k.as_int());
    case Kind::kFloat:
      return float_json(k.as_double());
    default:
      jinja::raise("TypeError: keys must be str, int, float, bool or None, not " + k.type_name());
  }
}

static void dump(std::string& out, const Value& v, const DumpsOptions& o, int depth) {
  if (depth > 512)
    jinja::raise("RecursionError: maximum recursion depth exceeded while encoding a JSON object");
  const std::string item_sep = o.item_separator.value_or(o.indent ? "," : ", ");
  const std::string key_sep = o.key_separator.value_or(": ");
  auto newline = [&](int level) {
    if (!o.indent) return;
    out.push_back('\n');
    for (int k = 0; k < level; ++k) out += *o.indent;
  };
  switch (v.kind()) {
    case Kind::kNone:
      out += "null";
      return;
    case Kind::kBool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Kind::kInt:
      out += std::to_string(v.as_int());
      return;
    case Kind::kFloat:
      out += float_json(v.as_double());
      return;
    case Kind::kString:
      dump_string(out, v.as_string(), o.ensure_ascii);
      return;
    case Kind::kList:
    case Kind::kTuple: {
      if (v.items().empty()) {
        out += "[]";
        return;
      }
      out.push_back('[');
      bool first = true;
      for (const auto& x : v.items()) {
        if (!first) out += item_sep;
        first = false;
        newline(depth + 1);
        dump(out, x, o, depth + 1);
      }
      newline(depth);
      out.push_back(']');
      return;
    }
    case Kind::kDict: {
      if (v.entries().empty()) {
        out += "{}";
        return;
      }
      std::vector<std::pair<std::string, const Value*>> items;
      for (const auto& [k, x] : v.entries()) items.emplace_back(key_string(k), &x);
      if (o.sort_keys) {
        for (const auto& [k, x] : v.entries()) {
          if (!k.is_string()) jinja::raise("TypeError: sort_keys needs str keys, got " + k.type_name());
        }
        std::stable_sort(items.begin(), items.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      out.push_back('{');
      bool first = true;
      for (const auto& [k, x] : items) {
        if (!first) out += item_sep;
        first = false;
        newline(depth + 1);
        dump_string(out, k, o.ensure_ascii);
        out += key_sep;
        dump(out, *x, o, depth + 1);
      }
      newline(depth);
      out.push_back('}');
      return;
    }
    default:
      jinja::raise("TypeError: Object of type " + v.type_name() + " is not JSON serializable");
  }
}

std::string dumps(const Value& v, const DumpsOptions& options) {
  std::string out;
  dump(out, v, options, 0);
  return out;
}

}  // namespace ct::text::py

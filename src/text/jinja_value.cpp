// Python object semantics for the engine's values; see jinja_value.h.
#include "text/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "text/jinja_error.h"
#include "text/py_text.h"

namespace ct::text::jinja {

const Value* CallArgs::get(const std::string& name, int pos) const {
  for (const auto& [k, v] : kwargs) {
    if (k == name) return &v;
  }
  if (pos >= 0 && static_cast<size_t>(pos) < args.size()) return &args[pos];
  return nullptr;
}

Value Value::undefined(std::string hint) {
  Value v;
  v.s_ = std::make_shared<const std::string>(std::move(hint));
  return v;
}
Value Value::none() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}
Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.b_ = b;
  return v;
}
Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.i_ = i;
  return v;
}
Value Value::number(double f) {
  Value v;
  v.kind_ = Kind::kFloat;
  v.f_ = f;
  return v;
}
Value Value::string(std::string s) {
  Value v;
  v.kind_ = Kind::kString;
  v.s_ = std::make_shared<const std::string>(std::move(s));
  return v;
}
Value Value::list(List items) {
  Value v;
  for (const auto& x : items) v.depth_ = std::max(v.depth_, x.depth_ + 1);
  if (v.depth_ > kMaxValueDepth) raise("values nested deeper than " + std::to_string(kMaxValueDepth));
  v.kind_ = Kind::kList;
  v.list_ = std::make_shared<const List>(std::move(items));
  return v;
}
Value Value::tuple(List items) {
  Value v = list(std::move(items));
  v.kind_ = Kind::kTuple;
  return v;
}
Value Value::named_tuple(List items, std::vector<std::string> names) {
  Value v = tuple(std::move(items));
  v.field_names_ = std::make_shared<const std::vector<std::string>>(std::move(names));
  return v;
}

Value Value::view(List items, View view, std::string range_repr) {
  Value v = list(std::move(items));
  v.view_ = view;
  v.s_ = std::make_shared<const std::string>(std::move(range_repr));
  return v;
}

const Value* Value::field(const std::string& name) const {
  if (!field_names_) return nullptr;
  for (size_t i = 0; i < field_names_->size() && i < list_->size(); ++i) {
    if ((*field_names_)[i] == name) return &(*list_)[i];
  }
  return nullptr;
}

Value Value::dict(Dict items) {
  Value v;
  for (const auto& [k, x] : items) v.depth_ = std::max({v.depth_, k.depth_ + 1, x.depth_ + 1});
  if (v.depth_ > kMaxValueDepth) raise("values nested deeper than " + std::to_string(kMaxValueDepth));
  v.kind_ = Kind::kDict;
  v.dict_ = std::make_shared<Dict>(std::move(items));
  return v;
}
Value Value::namespace_(Dict items) {
  Value v = dict(std::move(items));
  v.kind_ = Kind::kNamespace;
  return v;
}
Value Value::callable(std::string name, std::function<Value(Renderer&, const CallArgs&)> fn) {
  Value v;
  v.kind_ = Kind::kCallable;
  v.fn_ = std::make_shared<const Callable>(Callable{std::move(name), std::move(fn)});
  return v;
}

const Value* Value::find(const std::string& key) const {
  if (!dict_) return nullptr;
  for (const auto& [k, v] : *dict_) {
    if (k.is_string() && k.as_string() == key) return &v;
  }
  return nullptr;
}

const Value* Value::find(const Value& key) const {
  if (!dict_) return nullptr;
  for (const auto& [k, v] : *dict_) {
    if (equals(k, key)) return &v;
  }
  return nullptr;
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return b_;
    case Kind::kInt:
      return i_ != 0;
    case Kind::kFloat:
      return f_ != 0;
    case Kind::kString:
      return !s_->empty();
    case Kind::kList:
    case Kind::kTuple:
      return !list_->empty();
    case Kind::kDict:
      return !dict_->empty();
    case Kind::kNamespace:
    case Kind::kCallable:
      return true;
  }
  return false;
}

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "Undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kList:
      return "list";
    case Kind::kTuple:
      return "tuple";
    case Kind::kDict:
      return "dict";
    case Kind::kNamespace:
      return "Namespace";
    case Kind::kCallable:
      return "function";
  }
  return "object";
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // Shortest round-trip digits, as Python's repr picks them, then Python's layout of them.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const size_t e_pos = sci.find('e');
  std::string mant = sci.substr(0, e_pos);
  const int exp = std::stoi(sci.substr(e_pos + 1));
  std::string sign;
  if (mant[0] == '-') {
    sign = "-";
    mant.erase(0, 1);
  }
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits.push_back(c);
  }
  const int n = static_cast<int>(digits.size());
  if (exp >= -4 && exp < 16) {
    std::string out;
    if (exp < 0) {
      out = "0." + std::string(-exp - 1, '0') + digits;
    } else if (exp + 1 >= n) {
      out = digits + std::string(exp + 1 - n, '0') + ".0";
    } else {
      out = digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    }
    return sign + out;
  }
  std::string out = digits.substr(0, 1);
  if (n > 1) {
    out.push_back('.');
    out.append(digits, 1);
  }
  char e[16];
  std::snprintf(e, sizeof(e), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return sign + out + e;
}

static std::string seq_str(const Value& v) {
  std::string out = v.is_tuple() ? "(" : "[";
  const auto& items = v.items();
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += repr(items[i]);
  }
  if (v.is_tuple() && items.size() == 1) out += ",";
  out += v.is_tuple() ? ")" : "]";
  return out;
}

static std::string dict_str(const Dict& d) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, val] : d) {
    if (!first) out += ", ";
    first = false;
    out += repr(k) + ": " + repr(val);
  }
  return out + "}";
}

// A namespace can hold itself (`set ns.self = ns`); Python's repr would stop at the cycle, this stops at a
// depth.
struct ReprDepth {
  ReprDepth() {
    if (++depth() > static_cast<int>(kMaxValueDepth) + 16) {
      --depth();
      raise("RecursionError: maximum recursion depth exceeded while getting the repr of an object");
    }
  }
  ~ReprDepth() { --depth(); }
  static int& depth() {
    static thread_local int d = 0;
    return d;
  }
};

std::string to_str(const Value& v) {
  const ReprDepth guard;
  switch (v.kind()) {
    case Kind::kUndefined:
      return "";
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return v.as_bool() ? "True" : "False";
    case Kind::kInt:
      return std::to_string(v.as_int());
    case Kind::kFloat:
      return float_repr(v.as_double());
    case Kind::kString:
      return v.as_string();
    case Kind::kList:
    case Kind::kTuple:
      switch (v.view_kind()) {
        case Value::View::kRange:
          return v.range_repr();
        case Value::View::kDictItems:
          return "dict_items(" + seq_str(v) + ")";
        case Value::View::kDictKeys:
          return "dict_keys(" + seq_str(v) + ")";
        case Value::View::kDictValues:
          return "dict_values(" + seq_str(v) + ")";
        default:
          return seq_str(v);
      }
    case Kind::kDict:
      return dict_str(v.entries());
    case Kind::kNamespace:
      return "<Namespace " + dict_str(v.entries()) + ">";
    case Kind::kCallable:
      return "<function " + v.fn().name + ">";
  }
  return "";
}

std::string repr(const Value& v) {
  if (v.is_string()) return py::repr(v.as_string());
  if (v.is_undefined()) return "Undefined";
  return to_str(v);
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) {
    // A list never equals a tuple in Python.
    return false;
  }
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return true;
    case Kind::kString:
      return a.as_string() == b.as_string();
    case Kind::kList:
    case Kind::kTuple: {
      if (a.items().size() != b.items().size()) return false;
      for (size_t i = 0; i < a.items().size(); ++i) {
        if (!equals(a.items()[i], b.items()[i])) return false;
      }
      return true;
    }
    case Kind::kDict: {
      if (a.entries().size() != b.entries().size()) return false;
      for (const auto& [k, v] : a.entries()) {
        const Value* o = b.find(k);
        if (!o || !equals(v, *o)) return false;
      }
      return true;
    }
    case Kind::kNamespace:
      return &a.entries() == &b.entries();
    case Kind::kCallable:
      return &a.fn() == &b.fn();
    default:
      return false;
  }
}

bool less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  // UTF-8 byte order is code-point order, which is Python's str order.
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  if ((a.is_list() && b.is_list()) || (a.is_tuple() && b.is_tuple())) {
    const auto &x = a.items(), &y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  raise("TypeError: '<' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() +
        "'");
}

}  // namespace ct::text::jinja

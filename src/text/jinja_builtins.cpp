// Jinja2's filters, tests and globals (jinja2/filters.py, tests.py, defaults.py, sandbox.py) and the Python
// methods templates call, over engine values. Where Jinja2 and Python differ (the `title` filter is not
// str.title; `join` stringifies items, str.join does not), each follows its own source.
#include "text/jinja_builtins.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "text/jinja_error.h"
#include "text/jinja_render.h"
#include "text/py_format.h"
#include "text/py_json.h"
#include "text/py_text.h"
#include "text/unicode.h"

namespace ct::text::jinja {
namespace {

using FilterFn = Value (*)(Renderer&, const Value&, const CallArgs&);
using TestFn = bool (*)(Renderer&, const Value&, const CallArgs&);

[[noreturn]] void undefined_error(const Value& v) {
  raise(v.undefined_hint());
}

// Jinja's object_type_repr, for "'dict object' has no attribute 'x'".
std::string object_type(const Value& v) {
  if (v.is_none()) return "None";
  if (v.is_namespace()) return "jinja2.utils.Namespace object";
  return v.type_name() + " object";
}

Value missing_attr(const Value& obj, const std::string& name) {
  return Value::undefined("'" + object_type(obj) + "' has no attribute '" + name + "'");
}

const Value& arg_or(const CallArgs& a, const std::string& name, int pos, const Value& fallback) {
  const Value* v = a.get(name, pos);
  return v ? *v : fallback;
}

std::string str_arg(const CallArgs& a, const std::string& name, int pos, const std::string& fallback) {
  const Value* v = a.get(name, pos);
  if (!v) return fallback;
  if (v->is_undefined()) undefined_error(*v);
  return to_str(*v);
}

int64_t int_arg(const CallArgs& a, const std::string& name, int pos, int64_t fallback) {
  const Value* v = a.get(name, pos);
  if (!v || v->is_none()) return fallback;
  if (v->is_undefined()) undefined_error(*v);
  if (!v->is_int() && !v->is_bool()) {
    raise("TypeError: '" + v->type_name() + "' object cannot be interpreted as an integer");
  }
  return v->as_int();
}

bool bool_arg(const CallArgs& a, const std::string& name, int pos, bool fallback) {
  const Value* v = a.get(name, pos);
  return v ? v->truthy() : fallback;
}

const std::string& need_str(const Value& v, const char* what) {
  if (v.is_undefined()) undefined_error(v);
  if (!v.is_string()) raise(std::string("TypeError: ") + what + " expects a str, got " + v.type_name());
  return v.as_string();
}

// ---- attribute and item lookup ----------------------------------------------------------------------------

Value method(const Value& self, const std::string& name, Value (*fn)(const Value&, const CallArgs&)) {
  return Value::callable(name, [self, fn](Renderer&, const CallArgs& a) { return fn(self, a); });
}

std::optional<std::string> opt_chars(const CallArgs& a, int pos, const char* name) {
  const Value* v = a.get(name, pos);
  if (!v || v->is_none()) return std::nullopt;
  return need_str(*v, "strip");
}

// str.startswith / endswith: a prefix or a tuple of them.
bool affix(const Value& self, const CallArgs& a, bool start) {
  const std::string& s = self.as_string();
  const Value* p = a.get("", 0);
  if (!p) raise("TypeError: startswith() takes at least 1 argument (0 given)");
  std::vector<std::string> options;
  if (p->is_tuple() || p->is_list()) {
    for (const auto& x : p->items()) options.push_back(need_str(x, "startswith"));
  } else {
    options.push_back(need_str(*p, start ? "startswith" : "endswith"));
  }
  std::string window = s;
  if (a.args.size() > 1) {
    // start/end bounds are code-point indices, clamped as slices are; a start past the end matches nothing.
    const std::u32string u = py::decode(s);
    const int64_t n = static_cast<int64_t>(u.size());
    auto bound = [&](size_t i, int64_t dflt) {
      return a.args.size() > i && !a.args[i].is_none() ? a.args[i].as_int() : dflt;
    };
    int64_t b = bound(1, 0), e = bound(2, n);
    if (b > n) return false;
    if (b < 0) b = std::max<int64_t>(0, b + n);
    e = e < 0 ? std::max<int64_t>(0, e + n) : std::min(e, n);
    window = b <= e ? py::encode(std::u32string_view(u).substr(b, e - b)) : std::string();
  }
  const std::string_view view(window);
  for (const auto& o : options) {
    if (start ? view.substr(0, o.size()) == o
              : (view.size() >= o.size() && view.substr(view.size() - o.size()) == o)) {
      return true;
    }
  }
  return false;
}

std::string py_center(const std::string& s, int64_t width, const std::string& fill, char how) {
  const int64_t n = static_cast<int64_t>(py::length(s));
  if (width <= n) return s;
  const int64_t marg = width - n;
  int64_t left = how == 'c' ? marg / 2 + (marg & width & 1) : how == 'l' ? 0 : marg;
  int64_t right = marg - left;
  std::string out;
  for (int64_t k = 0; k < left; ++k) out += fill;
  out += s;
  for (int64_t k = 0; k < right; ++k) out += fill;
  return out;
}

Value str_method(const Value& self, const std::string& name) {
  using A = const CallArgs&;
  using S = const Value&;
  static const std::map<std::string, Value (*)(S, A)> kMethods = {
      {"upper", [](S s, A) { return Value::string(py::upper(s.as_string())); }},
      {"lower", [](S s, A) { return Value::string(py::lower(s.as_string())); }},
      {"title", [](S s, A) { return Value::string(py::title(s.as_string())); }},
      {"capitalize", [](S s, A) { return Value::string(py::capitalize(s.as_string())); }},
      {"swapcase", [](S s, A) { return Value::string(py::swapcase(s.as_string())); }},
      {"casefold", [](S s, A) { return Value::string(py::lower(s.as_string())); }},
      {"strip",
       [](S s, A a) {
         return Value::string(py::strip(s.as_string(), opt_chars(a, 0, "chars"), true, true));
       }},
      {"lstrip",
       [](S s, A a) {
         return Value::string(py::strip(s.as_string(), opt_chars(a, 0, "chars"), true, false));
       }},
      {"rstrip",
       [](S s, A a) {
         return Value::string(py::strip(s.as_string(), opt_chars(a, 0, "chars"), false, true));
       }},
      {"split",
       [](S s, A a) {
         List out;
         for (auto& p :
              py::split(s.as_string(), opt_chars(a, 0, "sep"), int_arg(a, "maxsplit", 1, -1), false))
           out.push_back(Value::string(p));
         return Value::list(std::move(out));
       }},
      {"rsplit",
       [](S s, A a) {
         List out;
         for (auto& p : py::split(s.as_string(), opt_chars(a, 0, "sep"), int_arg(a, "maxsplit", 1, -1), true))
           out.push_back(Value::string(p));
         return Value::list(std::move(out));
       }},
      {"splitlines",
       [](S s, A a) {
         List out;
         for (auto& p : py::splitlines(s.as_string(), bool_arg(a, "keepends", 0, false)))
           out.push_back(Value::string(p));
         return Value::list(std::move(out));
       }},
      {"startswith", [](S s, A a) { return Value::boolean(affix(s, a, true)); }},
      {"endswith", [](S s, A a) { return Value::boolean(affix(s, a, false)); }},
      {"replace",
       [](S s, A a) {
         if (a.args.size() < 2) raise("TypeError: replace expected at least 2 arguments");
         return Value::string(py::replace(s.as_string(), need_str(a.args[0], "replace"),
                                          need_str(a.args[1], "replace"), int_arg(a, "count", 2, -1)));
       }},
      {"find",
       [](S s, A a) { return Value::integer(py::find(s.as_string(), str_arg(a, "sub", 0, ""), false)); }},
      {"rfind",
       [](S s, A a) { return Value::integer(py::find(s.as_string(), str_arg(a, "sub", 0, ""), true)); }},
      {"index",
       [](S s, A a) {
         const int64_t i = py::find(s.as_string(), str_arg(a, "sub", 0, ""), false);
         if (i < 0) raise("ValueError: substring not found");
         return Value::integer(i);
       }},
      {"rindex",
       [](S s, A a) {
         const int64_t i = py::find(s.as_string(), str_arg(a, "sub", 0, ""), true);
         if (i < 0) raise("ValueError: substring not found");
         return Value::integer(i);
       }},
      {"count", [](S s, A a) { return Value::integer(py::count(s.as_string(), str_arg(a, "sub", 0, ""))); }},
      {"join",
       [](S s, A a) {
         if (a.args.empty()) raise("TypeError: str.join() takes exactly one argument (0 given)");
         std::string out;
         size_t i = 0;
         for (const auto& x : iterate(a.args[0])) {
           if (!x.is_string()) {
             raise("TypeError: sequence item " + std::to_string(i) + ": expected str instance, " +
                   x.type_name() + " found");
           }
           if (i++) out += s.as_string();
           out += x.as_string();
         }
         return Value::string(std::move(out));
       }},
      {"format", [](S s, A a) { return Value::string(py::str_format(s.as_string(), a)); }},
      {"isdigit", [](S s, A) { return Value::boolean(py::isdigit(s.as_string())); }},
      {"isdecimal", [](S s, A) { return Value::boolean(py::isdigit(s.as_string())); }},
      {"isnumeric", [](S s, A) { return Value::boolean(py::isdigit(s.as_string())); }},
      {"isalpha", [](S s, A) { return Value::boolean(py::isalpha(s.as_string())); }},
      {"isalnum", [](S s, A) { return Value::boolean(py::isalnum(s.as_string())); }},
      {"isspace", [](S s, A) { return Value::boolean(py::isspace(s.as_string())); }},
      {"islower", [](S s, A) { return Value::boolean(py::is_cased_lower(s.as_string())); }},
      {"isupper", [](S s, A) { return Value::boolean(py::is_cased_upper(s.as_string())); }},
      {"zfill",
       [](S s, A a) {
         const std::string& x = s.as_string();
         const int64_t w = int_arg(a, "width", 0, 0);
         const int64_t n = static_cast<int64_t>(py::length(x));
         if (w <= n) return s;
         const bool sign = !x.empty() && (x[0] == '+' || x[0] == '-');
         return Value::string((sign ? x.substr(0, 1) : "") + std::string(static_cast<size_t>(w - n), '0') +
                              x.substr(sign ? 1 : 0));
       }},
      {"center",
       [](S s, A a) {
         return Value::string(
             py_center(s.as_string(), int_arg(a, "width", 0, 0), str_arg(a, "fillchar", 1, " "), 'c'));
       }},
      {"ljust",
       [](S s, A a) {
         return Value::string(
             py_center(s.as_string(), int_arg(a, "width", 0, 0), str_arg(a, "fillchar", 1, " "), 'l'));
       }},
      {"rjust",
       [](S s, A a) {
         return Value::string(
             py_center(s.as_string(), int_arg(a, "width", 0, 0), str_arg(a, "fillchar", 1, " "), 'r'));
       }},
      {"removeprefix",
       [](S s, A a) {
         const std::string p = str_arg(a, "prefix", 0, "");
         const std::string& x = s.as_string();
         return Value::string(x.compare(0, p.size(), p) == 0 ? x.substr(p.size()) : x);
       }},
      {"removesuffix",
       [](S s, A a) {
         const std::string p = str_arg(a, "suffix", 0, "");
         const std::string& x = s.as_string();
         const bool has =
             !p.empty() && x.size() >= p.size() && x.compare(x.size() - p.size(), p.size(), p) == 0;
         return Value::string(has ? x.substr(0, x.size() - p.size()) : x);
       }},
      {"partition",
       [](S s, A a) {
         const std::string sep = str_arg(a, "sep", 0, "");
         if (sep.empty()) raise("ValueError: empty separator");
         const std::string& x = s.as_string();
         const size_t i = x.find(sep);
         if (i == std::string::npos) return Value::tuple({s, Value::string(""), Value::string("")});
         return Value::tuple(
             {Value::string(x.substr(0, i)), Value::string(sep), Value::string(x.substr(i + sep.size()))});
       }},
      {"rpartition",
       [](S s, A a) {
         const std::string sep = str_arg(a, "sep", 0, "");
         if (sep.empty()) raise("ValueError: empty separator");
         const std::string& x = s.as_string();
         const size_t i = x.rfind(sep);
         if (i == std::string::npos) return Value::tuple({Value::string(""), Value::string(""), s});
         return Value::tuple(
             {Value::string(x.substr(0, i)), Value::string(sep), Value::string(x.substr(i + sep.size()))});
       }},
  };
  auto it = kMethods.find(name);
  if (it == kMethods.end()) return missing_attr(self, name);
  return method(self, name, it->second);
}

Value unsafe(const Value& obj, const std::string& name) {
  return Value::undefined("access to attribute '" + name + "' of '" + obj.type_name() +
                          "' object is unsafe.");
}

Value dict_method(const Value& self, const std::string& name) {
  using A = const CallArgs&;
  using S = const Value&;
  if (name == "items") {
    return method(self, name, [](S s, A) {
      List out;
      for (const auto& [k, v] : s.entries()) out.push_back(Value::tuple({k, v}));
      return Value::view(std::move(out), Value::View::kDictItems);
    });
  }
  if (name == "keys") {
    return method(self, name, [](S s, A) {
      List out;
      for (const auto& [k, v] : s.entries()) out.push_back(k);
      return Value::view(std::move(out), Value::View::kDictKeys);
    });
  }
  if (name == "values") {
    return method(self, name, [](S s, A) {
      List out;
      for (const auto& [k, v] : s.entries()) out.push_back(v);
      return Value::view(std::move(out), Value::View::kDictValues);
    });
  }
  if (name == "get") {
    return method(self, name, [](S s, A a) {
      if (a.args.empty()) raise("TypeError: get expected at least 1 argument, got 0");
      const Value* v = s.find(a.args[0]);
      if (v) return *v;
      return a.args.size() > 1 ? a.args[1] : Value::none();
    });
  }
  if (name == "copy") return method(self, name, [](S s, A) { return Value::dict(s.entries()); });
  static const std::set<std::string> kUnsafe = {"clear", "pop", "popitem", "setdefault", "update"};
  if (kUnsafe.count(name)) return unsafe(self, name);
  return Value();  // not a method: the caller looks for the key
}

Value list_method(const Value& self, const std::string& name) {
  using A = const CallArgs&;
  using S = const Value&;
  if (name == "index") {
    return method(self, name, [](S s, A a) {
      if (a.args.empty()) raise("TypeError: index expected at least 1 argument, got 0");
      for (size_t i = 0; i < s.items().size(); ++i) {
        if (equals(s.items()[i], a.args[0])) return Value::integer(static_cast<int64_t>(i));
      }
      raise(repr(a.args[0]) + " is not in list");
    });
  }
  if (name == "count") {
    return method(self, name, [](S s, A a) {
      if (a.args.empty()) raise("TypeError: count() takes exactly one argument (0 given)");
      int64_t n = 0;
      for (const auto& x : s.items()) n += equals(x, a.args[0]);
      return Value::integer(n);
    });
  }
  static const std::set<std::string> kUnsafe = {"append", "clear",  "extend",  "insert",
                                                "pop",    "remove", "reverse", "sort"};
  if (self.is_list() && kUnsafe.count(name)) return unsafe(self, name);
  return missing_attr(self, name);
}

}  // namespace

Value get_attr(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case Kind::kDict: {
      Value m = dict_method(obj, name);
      if (!m.is_undefined() || !m.undefined_hint().empty()) return m;
      if (const Value* v = obj.find(name)) return *v;
      return missing_attr(obj, name);
    }
    case Kind::kNamespace:
      if (const Value* v = obj.find(name)) return *v;
      return missing_attr(obj, name);
    case Kind::kString:
      return str_method(obj, name);
    case Kind::kList:
    case Kind::kTuple:
      if (const Value* f = obj.field(name)) return *f;
      return list_method(obj, name);
    case Kind::kUndefined:
      undefined_error(obj);
    default:
      return missing_attr(obj, name);
  }
}

Value get_item(const Value& obj, const Value& key) {
  switch (obj.kind()) {
    case Kind::kDict:
      if (const Value* v = obj.find(key)) return *v;
      break;
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kString:
      if (key.is_int() || key.is_bool()) {
        int64_t i = key.as_int();
        if (obj.is_string()) {
          const std::u32string u = py::decode(obj.as_string());
          const int64_t n = static_cast<int64_t>(u.size());
          if (i < 0) i += n;
          if (i >= 0 && i < n) return Value::string(py::encode(std::u32string(1, u[static_cast<size_t>(i)])));
        } else {
          const int64_t n = static_cast<int64_t>(obj.items().size());
          if (i < 0) i += n;
          if (i >= 0 && i < n) return obj.items()[static_cast<size_t>(i)];
        }
        return Value::undefined("'" + object_type(obj) + "' has no element " + repr(key));
      }
      break;
    case Kind::kUndefined:
      undefined_error(obj);
    default:
      break;
  }
  // The sandbox's getitem falls back to the attribute for a str key.
  if (key.is_string()) {
    if (obj.is_dict()) {
      Value m = dict_method(obj, key.as_string());
      if (!m.is_undefined() || !m.undefined_hint().empty()) return m;
      return missing_attr(obj, key.as_string());
    }
    return get_attr(obj, key.as_string());
  }
  return Value::undefined("'" + object_type(obj) + "' has no element " + repr(key));
}

Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  if (!obj.is_string() && !obj.is_list() && !obj.is_tuple()) {
    return Value::undefined("'" + object_type(obj) + "' has no element slice");
  }
  auto part = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    if (!v.is_int() && !v.is_bool())
      raise(std::string("TypeError: slice ") + what + " must be an integer or None");
    return v.as_int();
  };
  const int64_t st = part(step, "step").value_or(1);
  if (st == 0) raise("ValueError: slice step cannot be zero");
  std::u32string u;
  int64_t n;
  if (obj.is_string()) {
    u = py::decode(obj.as_string());
    n = static_cast<int64_t>(u.size());
  } else {
    n = static_cast<int64_t>(obj.items().size());
  }
  // PySlice_AdjustIndices.
  auto adjust = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = st < 0 ? -1 : 0;
    } else if (x >= n) {
      x = st < 0 ? n - 1 : n;
    }
    return x;
  };
  const int64_t b = adjust(part(start, "start"), st < 0 ? n - 1 : 0);
  const int64_t e = adjust(part(stop, "stop"), st < 0 ? -1 : n);
  std::vector<int64_t> idx;
  for (int64_t i = b; st > 0 ? i < e : i > e; i += st) idx.push_back(i);
  if (obj.is_string()) {
    std::u32string out;
    for (int64_t i : idx) out.push_back(u[static_cast<size_t>(i)]);
    return Value::string(py::encode(out));
  }
  List out;
  for (int64_t i : idx) out.push_back(obj.items()[static_cast<size_t>(i)]);
  return obj.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

List iterate(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined:
      return {};
    case Kind::kList:
    case Kind::kTuple:
      return v.items();
    case Kind::kDict: {
      List out;
      for (const auto& [k, x] : v.entries()) out.push_back(k);
      return out;
    }
    case Kind::kString: {
      List out;
      for (char32_t c : py::decode(v.as_string()))
        out.push_back(Value::string(py::encode(std::u32string(1, c))));
      return out;
    }
    default:
      raise("TypeError: '" + v.type_name() + "' object is not iterable");
  }
}

namespace {

// ---- filters
// ------------------------------------------------------------------------------------------------

std::string soft_str(const Value& v) {
  return to_str(v);
}

// Jinja's make_attrgetter: "a.b.0" looked up part by part with getitem semantics.
Value get_path(const Value& v, const std::string& path, const Value* dflt) {
  Value cur = v;
  size_t b = 0;
  while (true) {
    const size_t dot = path.find('.', b);
    const std::string part = path.substr(b, dot == std::string::npos ? std::string::npos : dot - b);
    if (cur.is_undefined()) undefined_error(cur);
    const auto as_int = py::parse_int(part, 10);
    const bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    cur = get_item(cur, digits && as_int ? Value::integer(*as_int) : Value::string(part));
    if (cur.is_undefined() && dflt) return *dflt;
    if (dot == std::string::npos) return cur;
    b = dot + 1;
  }
}

Value ignore_case(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::string(py::lower(v.as_string()));
  return v;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

double round_half_even_decimal(double x, int64_t digits) {
  // Python's round(x, n) is correctly rounded from the exact binary value; printf's %.nf is too.
  if (!std::isfinite(x)) return x;
  if (digits < 0) {
    const double p = std::pow(10.0, static_cast<double>(-digits));
    return std::nearbyint(x / p) * p;
  }
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(std::min<int64_t>(digits, 300)), x);
  return std::strtod(buf, nullptr);
}

Value f_abs(Renderer&, const Value& v, const CallArgs&) {
  if (v.is_float()) return Value::number(std::fabs(v.as_double()));
  if (v.is_int() || v.is_bool()) return Value::integer(v.as_int() < 0 ? -v.as_int() : v.as_int());
  if (v.is_undefined()) undefined_error(v);
  raise("TypeError: bad operand type for abs(): '" + v.type_name() + "'");
}

Value f_attr(Renderer&, const Value& v, const CallArgs& a) {
  const std::string name = str_arg(a, "name", 0, "");
  if (v.is_undefined()) undefined_error(v);
  // Python getattr only: a dict's keys are not attributes.
  if (v.is_dict()) {
    Value m = dict_method(v, name);
    if (!m.is_undefined() || !m.undefined_hint().empty()) return m;
    return missing_attr(v, name);
  }
  return get_attr(v, name);
}

Value f_batch(Renderer&, const Value& v, const CallArgs& a) {
  const int64_t n = int_arg(a, "linecount", 0, 1);
  if (n <= 0) raise("ValueError: batch size must be positive");
  const Value* fill = a.get("fill_with", 1);
  List out, cur;
  for (const auto& x : iterate(v)) {
    cur.push_back(x);
    if (static_cast<int64_t>(cur.size()) == n) {
      out.push_back(Value::list(std::move(cur)));
      cur.clear();
    }
  }
  if (!cur.empty()) {
    if (fill && !fill->is_none()) {
      while (static_cast<int64_t>(cur.size()) < n) cur.push_back(*fill);
    }
    out.push_back(Value::list(std::move(cur)));
  }
  return Value::list(std::move(out));
}

Value f_capitalize(Renderer&, const Value& v, const CallArgs&) {
  return Value::string(py::capitalize(soft_str(v)));
}
Value f_center(Renderer& r, const Value& v, const CallArgs& a) {
  const int64_t w = int_arg(a, "width", 0, 80);
  r.check_size(static_cast<size_t>(std::max<int64_t>(0, w)));
  return Value::string(py_center(soft_str(v), w, " ", 'c'));
}

Value f_default(Renderer&, const Value& v, const CallArgs& a) {
  static const Value kEmpty = Value::string("");
  const Value& d = arg_or(a, "default_value", 0, kEmpty);
  const bool boolean = bool_arg(a, "boolean", 1, false);
  if (v.is_undefined() || (boolean && !v.truthy())) return d;
  return v;
}

Value f_dictsort(Renderer&, const Value& v, const CallArgs& a) {
  if (v.is_undefined()) undefined_error(v);
  if (!v.is_dict()) raise("TypeError: dictsort expects a dict, got " + v.type_name());
  const bool cs = bool_arg(a, "case_sensitive", 0, false);
  const std::string by = str_arg(a, "by", 1, "key");
  const bool reverse = bool_arg(a, "reverse", 2, false);
  if (by != "key" && by != "value")
    raise("FilterArgumentError: You can only sort by either \"key\" or \"value\"");
  List items;
  for (const auto& [k, x] : v.entries()) items.push_back(Value::tuple({k, x}));
  const size_t pos = by == "key" ? 0 : 1;
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    const Value kx = ignore_case(x.items()[pos], cs), ky = ignore_case(y.items()[pos], cs);
    return reverse ? less(ky, kx) : less(kx, ky);
  });
  return Value::list(std::move(items));
}

Value f_escape(Renderer&, const Value& v, const CallArgs&) {
  return Value::string(html_escape(soft_str(v)));
}

Value f_first(Renderer&, const Value& v, const CallArgs&) {
  const List items = iterate(v);
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Value f_last(Renderer&, const Value& v, const CallArgs&) {
  const List items = iterate(v);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Value f_float(Renderer&, const Value& v, const CallArgs& a) {
  static const Value kZero = Value::number(0.0);
  const Value& d = arg_or(a, "default", 0, kZero);
  if (v.is_undefined()) undefined_error(v);  // float(Undefined) calls its failing __float__
  if (v.is_number()) return Value::number(v.as_double());
  if (v.is_string()) {
    if (auto f = py::parse_float(v.as_string())) return Value::number(*f);
  }
  return d;
}

Value f_int(Renderer&, const Value& v, const CallArgs& a) {
  static const Value kZero = Value::integer(0);
  const Value& d = arg_or(a, "default", 0, kZero);
  const int64_t base = int_arg(a, "base", 1, 10);
  if (v.is_undefined()) undefined_error(v);  // int(Undefined) calls its failing __int__
  if (v.is_int() || v.is_bool()) return Value::integer(v.as_int());
  if (v.is_float()) {
    if (!std::isfinite(v.as_double())) return d;
    return Value::integer(static_cast<int64_t>(std::trunc(v.as_double())));
  }
  if (v.is_string()) {
    if (auto i = py::parse_int(v.as_string(), static_cast<int>(base))) return Value::integer(*i);
    // "42.23"|int is 42: Jinja retries through float.
    if (auto f = py::parse_float(v.as_string()); f && std::isfinite(*f)) {
      return Value::integer(static_cast<int64_t>(std::trunc(*f)));
    }
  }
  return d;
}

Value f_format(Renderer&, const Value& v, const CallArgs& a) {
  if (!a.args.empty() && !a.kwargs.empty())
    raise("FilterArgumentError: can't handle positional and keyword arguments at the same time");
  if (!a.kwargs.empty()) {
    Dict d;
    for (const auto& [k, x] : a.kwargs) d.emplace_back(Value::string(k), x);
    return Value::string(py::percent_format(soft_str(v), Value::dict(std::move(d))));
  }
  return Value::string(py::percent_format(soft_str(v), Value::tuple(a.args)));
}

Value f_groupby(Renderer&, const Value& v, const CallArgs& a) {
  const std::string attr = str_arg(a, "attribute", 0, "");
  const Value* dflt = a.get("default", 1);
  const bool cs = bool_arg(a, "case_sensitive", 2, false);
  List items = iterate(v);
  auto key = [&](const Value& x) { return ignore_case(get_path(x, attr, dflt), cs); };
  std::stable_sort(items.begin(), items.end(),
                   [&](const Value& x, const Value& y) { return less(key(x), key(y)); });
  List out;
  for (size_t i = 0; i < items.size();) {
    const Value k = key(items[i]);
    List group;
    size_t j = i;
    while (j < items.size() && equals(key(items[j]), k)) group.push_back(items[j++]);
    // The grouper is the first item's own value, not the case-folded one.
    out.push_back(Value::named_tuple({get_path(items[i], attr, dflt), Value::list(std::move(group))},
                                     {"grouper", "list"}));
    i = j;
  }
  return Value::list(std::move(out));
}

Value f_indent(Renderer&, const Value& v, const CallArgs& a) {
  if (v.is_undefined()) undefined_error(v);  // Jinja2 appends "\n" to the value itself
  const Value* w = a.get("width", 0);
  std::string indention;
  if (w && w->is_string()) {
    indention = w->as_string();
  } else {
    indention = std::string(static_cast<size_t>(std::max<int64_t>(0, int_arg(a, "width", 0, 4))), ' ');
  }
  const bool first = bool_arg(a, "first", 1, false);
  const bool blank = bool_arg(a, "blank", 2, false);
  const std::string s = soft_str(v) + "\n";
  const auto lines = py::splitlines(s, false);
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) rv += (i ? "\n" + indention : "") + lines[i];
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) rv += "\n" + (lines[i].empty() ? "" : indention + lines[i]);
  }
  if (first) rv = indention + rv;
  return Value::string(rv);
}

Value f_items(Renderer&, const Value& v, const CallArgs&) {
  if (v.is_undefined()) return Value::list({});
  if (!v.is_dict()) raise("TypeError: Can only get item pairs from a mapping.");
  List out;
  for (const auto& [k, x] : v.entries()) out.push_back(Value::tuple({k, x}));
  return Value::list(std::move(out));
}

Value f_join(Renderer& r, const Value& v, const CallArgs& a) {
  const std::string sep = str_arg(a, "d", 0, "");
  const Value* attr = a.get("attribute", 1);
  std::string out;
  size_t i = 0;
  for (const auto& x : iterate(v)) {
    if (i++) out += sep;
    out += soft_str(attr && !attr->is_none() ? get_path(x, to_str(*attr), nullptr) : x);
    r.check_size(out.size());
  }
  return Value::string(std::move(out));
}

Value f_length(Renderer&, const Value& v, const CallArgs&) {
  switch (v.kind()) {
    case Kind::kUndefined:
      return Value::integer(0);
    case Kind::kString:
      return Value::integer(static_cast<int64_t>(py::length(v.as_string())));
    case Kind::kList:
    case Kind::kTuple:
      return Value::integer(static_cast<int64_t>(v.items().size()));
    case Kind::kDict:
      return Value::integer(static_cast<int64_t>(v.entries().size()));
    default:
      raise("TypeError: object of type '" + v.type_name() + "' has no len()");
  }
}

Value f_list(Renderer&, const Value& v, const CallArgs&) {
  return Value::list(iterate(v));
}
Value f_lower(Renderer&, const Value& v, const CallArgs&) {
  return Value::string(py::lower(soft_str(v)));
}
Value f_upper(Renderer&, const Value& v, const CallArgs&) {
  return Value::string(py::upper(soft_str(v)));
}

// Jinja's own title: each run after a space, dash or bracket starts upper, the rest lower.
Value f_title(Renderer&, const Value& v, const CallArgs&) {
  const std::u32string u = py::decode(soft_str(v));
  std::string out;
  bool start = true;
  for (char32_t c : u) {
    const bool sep = py::isspace(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
    std::string one = py::encode(std::u32string(1, c));
    if (sep) {
      out += one;
      start = true;
    } else {
      out += start ? py::upper(one) : py::lower(one);
      start = false;
    }
  }
  return Value::string(out);
}

Value apply_filter_impl(Renderer& r, const std::string& name, const Value& input, const CallArgs& args);
bool apply_test_impl(Renderer& r, const std::string& name, const Value& input, const CallArgs& args);

Value f_map(Renderer& r, const Value& v, const CallArgs& a) {
  List out;
  if (const Value* attr = a.get("attribute", -1)) {
    const Value* dflt = a.get("default", -1);
    for (const auto& x : iterate(v)) out.push_back(get_path(x, to_str(*attr), dflt));
    return Value::list(std::move(out));
  }
  if (a.args.empty()) raise("FilterArgumentError: map requires a filter argument");
  const std::string filter = need_str(a.args[0], "map");
  if (!has_filter(filter)) raise("No filter named '" + filter + "'.");
  CallArgs rest;
  rest.args.assign(a.args.begin() + 1, a.args.end());
  rest.kwargs = a.kwargs;
  for (const auto& x : iterate(v)) out.push_back(apply_filter_impl(r, filter, x, rest));
  return Value::list(std::move(out));
}

Value select_common(Renderer& r, const Value& v, const CallArgs& a, bool by_attr, bool keep) {
  size_t first = 0;
  std::string attr;
  if (by_attr) {
    if (a.args.empty()) raise("FilterArgumentError: Missing parameter for attribute name");
    attr = to_str(a.args[0]);
    first = 1;
  }
  std::string test;
  CallArgs rest;
  if (a.args.size() > first) {
    test = need_str(a.args[first], "select");
    if (!has_test(test)) raise("No test named '" + test + "'.");
    rest.args.assign(a.args.begin() + static_cast<long>(first) + 1, a.args.end());
    rest.kwargs = a.kwargs;
  }
  List out;
  for (const auto& x : iterate(v)) {
    const Value item = by_attr ? get_path(x, attr, nullptr) : x;
    const bool pass = test.empty() ? item.truthy() : apply_test_impl(r, test, item, rest);
    if (pass == keep) out.push_back(x);
  }
  return Value::list(std::move(out));
}
Value f_select(Renderer& r, const Value& v, const CallArgs& a) {
  return select_common(r, v, a, false, true);
}
Value f_reject(Renderer& r, const Value& v, const CallArgs& a) {
  return select_common(r, v, a, false, false);
}
Value f_selectattr(Renderer& r, const Value& v, const CallArgs& a) {
  return select_common(r, v, a, true, true);
}
Value f_rejectattr(Renderer& r, const Value& v, const CallArgs& a) {
  return select_common(r, v, a, true, false);
}

Value min_max(const Value& v, const CallArgs& a, bool want_max) {
  const bool cs = bool_arg(a, "case_sensitive", 0, false);
  const Value* attr = a.get("attribute", 1);
  const List items = iterate(v);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  auto key = [&](const Value& x) {
    return ignore_case(attr && !attr->is_none() ? get_path(x, to_str(*attr), nullptr) : x, cs);
  };
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    if (want_max ? less(key(items[best]), key(items[i])) : less(key(items[i]), key(items[best]))) best = i;
  }
  return items[best];
}
Value f_max(Renderer&, const Value& v, const CallArgs& a) {
  return min_max(v, a, true);
}
Value f_min(Renderer&, const Value& v, const CallArgs& a) {
  return min_max(v, a, false);
}

Value f_replace(Renderer& r, const Value& v, const CallArgs& a) {
  if (a.args.size() < 2 && !(a.get("old", 0) && a.get("new", 1)))
    raise("TypeError: replace needs old and new");
  const int64_t count = int_arg(a, "count", 2, -1);
  std::string out = py::replace(soft_str(v), str_arg(a, "old", 0, ""), str_arg(a, "new", 1, ""), count);
  r.check_size(out.size());
  return Value::string(std::move(out));
}

Value f_reverse(Renderer&, const Value& v, const CallArgs&) {
  if (v.is_string()) {
    std::u32string u = py::decode(v.as_string());
    std::reverse(u.begin(), u.end());
    return Value::string(py::encode(u));
  }
  List items = iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::list(std::move(items));
}

Value f_round(Renderer&, const Value& v, const CallArgs& a) {
  const int64_t precision = int_arg(a, "precision", 0, 0);
  const std::string m = str_arg(a, "method", 1, "common");
  if (m != "common" && m != "ceil" && m != "floor")
    raise("FilterArgumentError: method must be common, ceil or floor");
  if (v.is_undefined()) undefined_error(v);
  if (!v.is_number()) raise("TypeError: type " + v.type_name() + " doesn't define __round__ method");
  if (m == "common") {
    if (!v.is_float()) {
      if (precision >= 0) return Value::integer(v.as_int());
      return Value::integer(static_cast<int64_t>(round_half_even_decimal(v.as_double(), precision)));
    }
    return Value::number(round_half_even_decimal(v.as_double(), precision));
  }
  const double p = std::pow(10.0, static_cast<double>(precision));
  const double x = v.as_double() * p;
  return Value::number((m == "ceil" ? std::ceil(x) : std::floor(x)) / p);
}

Value f_safe(Renderer&, const Value& v, const CallArgs&) {
  return v;
}

Value f_sort(Renderer&, const Value& v, const CallArgs& a) {
  const bool reverse = bool_arg(a, "reverse", 0, false);
  const bool cs = bool_arg(a, "case_sensitive", 1, false);
  const Value* attr = a.get("attribute", 2);
  List items = iterate(v);
  auto key = [&](const Value& x) {
    return ignore_case(attr && !attr->is_none() ? get_path(x, to_str(*attr), nullptr) : x, cs);
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    return reverse ? less(key(y), key(x)) : less(key(x), key(y));
  });
  return Value::list(std::move(items));
}

Value f_string(Renderer&, const Value& v, const CallArgs&) {
  return Value::string(soft_str(v));
}

Value f_sum(Renderer& r, const Value& v, const CallArgs& a) {
  const Value* attr = a.get("attribute", 0);
  static const Value kZero = Value::integer(0);
  Value total = arg_or(a, "start", 1, kZero);
  for (const auto& x : iterate(v)) {
    total = py::binary_op("+", total, attr && !attr->is_none() ? get_path(x, to_str(*attr), nullptr) : x,
                          size_t{64} << 20);
  }
  (void)r;
  return total;
}

Value f_tojson(Renderer&, const Value& v, const CallArgs& a) {
  py::DumpsOptions o;
  o.ensure_ascii = bool_arg(a, "ensure_ascii", 0, false);
  if (const Value* ind = a.get("indent", 1); ind && !ind->is_none()) {
    if (ind->is_string()) {
      o.indent = ind->as_string();
    } else if (ind->is_int()) {
      o.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, ind->as_int())), ' ');
    } else {
      raise("TypeError: indent must be an int or a str");
    }
  }
  if (const Value* sep = a.get("separators", 2); sep && !sep->is_none()) {
    if (!sep->is_sequence_of_values() || sep->items().size() != 2)
      raise("ValueError: separators must be a pair");
    o.item_separator = need_str(sep->items()[0], "separators");
    o.key_separator = need_str(sep->items()[1], "separators");
  }
  o.sort_keys = bool_arg(a, "sort_keys", 3, false);
  return Value::string(py::dumps(v, o));
}

Value f_trim(Renderer&, const Value& v, const CallArgs& a) {
  return Value::string(py::strip(soft_str(v), opt_chars(a, 0, "chars"), true, true));
}

Value f_truncate(Renderer&, const Value& v, const CallArgs& a) {
  const std::string s = soft_str(v);
  const int64_t length = int_arg(a, "length", 0, 255);
  const bool killwords = bool_arg(a, "killwords", 1, false);
  const std::string end = str_arg(a, "end", 2, "...");
  const int64_t leeway = int_arg(a, "leeway", 3, 5);
  const int64_t end_len = static_cast<int64_t>(py::length(end));
  if (length < end_len)
    raise("AssertionError: expected length >= " + std::to_string(end_len) + ", got " +
          std::to_string(length));
  if (leeway < 0) raise("AssertionError: expected leeway >= 0, got " + std::to_string(leeway));
  const std::u32string u = py::decode(s);
  if (static_cast<int64_t>(u.size()) <= length + leeway) return Value::string(s);
  const std::string head =
      py::encode(std::u32string_view(u).substr(0, static_cast<size_t>(length - end_len)));
  if (killwords) return Value::string(head + end);
  const size_t sp = head.rfind(' ');
  return Value::string((sp == std::string::npos ? head : head.substr(0, sp)) + end);
}

Value f_unique(Renderer&, const Value& v, const CallArgs& a) {
  const bool cs = bool_arg(a, "case_sensitive", 0, false);
  const Value* attr = a.get("attribute", 1);
  List out, seen;
  for (const auto& x : iterate(v)) {
    const Value k = ignore_case(attr && !attr->is_none() ? get_path(x, to_str(*attr), nullptr) : x, cs);
    bool dup = false;
    for (const auto& s : seen) dup = dup || equals(s, k);
    if (dup) continue;
    seen.push_back(k);
    out.push_back(x);
  }
  return Value::list(std::move(out));
}

Value f_wordcount(Renderer&, const Value& v, const CallArgs&) {
  // len(re.findall(r"\w+", s)): runs of letters, digits, marks and underscore.
  int64_t n = 0;
  bool in = false;
  for (char32_t c : py::decode(soft_str(v))) {
    const bool w = c == '_' || py::isalnum(py::encode(std::u32string(1, c)));
    if (w && !in) ++n;
    in = w;
  }
  return Value::integer(n);
}

const std::map<std::string, FilterFn>& filters() {
  static const std::map<std::string, FilterFn> k = {
      {"abs", f_abs},
      {"attr", f_attr},
      {"batch", f_batch},
      {"capitalize", f_capitalize},
      {"center", f_center},
      {"count", f_length},
      {"d", f_default},
      {"default", f_default},
      {"dictsort", f_dictsort},
      {"e", f_escape},
      {"escape", f_escape},
      {"first", f_first},
      {"float", f_float},
      {"forceescape", f_escape},
      {"format", f_format},
      {"groupby", f_groupby},
      {"indent", f_indent},
      {"int", f_int},
      {"items", f_items},
      {"join", f_join},
      {"last", f_last},
      {"length", f_length},
      {"list", f_list},
      {"lower", f_lower},
      {"map", f_map},
      {"max", f_max},
      {"min", f_min},
      {"reject", f_reject},
      {"rejectattr", f_rejectattr},
      {"replace", f_replace},
      {"reverse", f_reverse},
      {"round", f_round},
      {"safe", f_safe},
      {"select", f_select},
      {"selectattr", f_selectattr},
      {"sort", f_sort},
      {"string", f_string},
      {"sum", f_sum},
      {"title", f_title},
      {"tojson", f_tojson},
      {"trim", f_trim},
      {"truncate", f_truncate},
      {"unique", f_unique},
      {"upper", f_upper},
      {"wordcount", f_wordcount},
  };
  return k;
}

// Jinja2 has these; this engine does not, and says so rather than "no filter named".
const std::set<std::string>& unsupported_filters() {
  static const std::set<std::string> k = {"filesizeformat", "pprint", "random",   "slice",  "striptags",
                                          "urlencode",      "urlize", "wordwrap", "xmlattr"};
  return k;
}

// ---- tests
// --------------------------------------------------------------------------------------------------

bool t_defined(Renderer&, const Value& v, const CallArgs&) {
  return !v.is_undefined();
}
bool t_undefined(Renderer&, const Value& v, const CallArgs&) {
  return v.is_undefined();
}
bool t_none(Renderer&, const Value& v, const CallArgs&) {
  return v.is_none();
}
bool t_boolean(Renderer&, const Value& v, const CallArgs&) {
  return v.is_bool();
}
bool t_false(Renderer&, const Value& v, const CallArgs&) {
  return v.is_bool() && !v.as_bool();
}
bool t_true(Renderer&, const Value& v, const CallArgs&) {
  return v.is_bool() && v.as_bool();
}
bool t_integer(Renderer&, const Value& v, const CallArgs&) {
  return v.is_int();
}
bool t_float(Renderer&, const Value& v, const CallArgs&) {
  return v.is_float();
}
bool t_number(Renderer&, const Value& v, const CallArgs&) {
  return v.is_number();
}
bool t_string(Renderer&, const Value& v, const CallArgs&) {
  return v.is_string();
}
bool t_mapping(Renderer&, const Value& v, const CallArgs&) {
  return v.is_dict();
}
bool t_callable(Renderer&, const Value& v, const CallArgs&) {
  return v.is_callable();
}
bool t_escaped(Renderer&, const Value&, const CallArgs&) {
  return false;
}
// iter() works on Undefined (it iterates as empty), and len() and [] exist on it too.
bool t_iterable(Renderer&, const Value& v, const CallArgs&) {
  return v.is_undefined() || v.is_string() || v.is_list() || v.is_tuple() || v.is_dict();
}
bool t_sequence(Renderer& r, const Value& v, const CallArgs& a) {
  return t_iterable(r, v, a);
}
bool t_lower(Renderer&, const Value& v, const CallArgs&) {
  return py::is_cased_lower(to_str(v));
}
bool t_upper(Renderer&, const Value& v, const CallArgs&) {
  return py::is_cased_upper(to_str(v));
}

const Value& test_arg(const CallArgs& a) {
  if (a.args.empty()) raise("TypeError: test needs an argument");
  return a.args[0];
}

bool t_odd(Renderer&, const Value& v, const CallArgs&) {
  if (v.is_undefined()) undefined_error(v);
  return py::binary_op("%", v, Value::integer(2), 0).as_double() == 1;
}
bool t_even(Renderer&, const Value& v, const CallArgs&) {
  if (v.is_undefined()) undefined_error(v);
  return py::binary_op("%", v, Value::integer(2), 0).as_double() == 0;
}
bool t_divisibleby(Renderer&, const Value& v, const CallArgs& a) {
  if (v.is_undefined()) undefined_error(v);
  return py::binary_op("%", v, test_arg(a), 0).as_double() == 0;
}
bool t_eq(Renderer&, const Value& v, const CallArgs& a) {
  return equals(v, test_arg(a));
}
bool t_ne(Renderer&, const Value& v, const CallArgs& a) {
  return !equals(v, test_arg(a));
}
bool t_lt(Renderer&, const Value& v, const CallArgs& a) {
  return less(v, test_arg(a));
}
bool t_gt(Renderer&, const Value& v, const CallArgs& a) {
  return less(test_arg(a), v);
}
bool t_le(Renderer&, const Value& v, const CallArgs& a) {
  return less(v, test_arg(a)) || equals(v, test_arg(a));
}
bool t_ge(Renderer&, const Value& v, const CallArgs& a) {
  return less(test_arg(a), v) || equals(v, test_arg(a));
}
bool t_in(Renderer&, const Value& v, const CallArgs& a) {
  return py::contains(test_arg(a), v);
}
bool t_sameas(Renderer&, const Value& v, const CallArgs& a) {
  // `is`: the singletons None/True/False compare by identity; other values only when they share storage.
  const Value& o = test_arg(a);
  if (v.is_none() || o.is_none() || v.is_bool() || o.is_bool() || v.is_undefined()) {
    return v.kind() == o.kind() && (!v.is_bool() || v.as_bool() == o.as_bool());
  }
  if (v.is_sequence_of_values() && o.is_sequence_of_values()) return &v.items() == &o.items();
  if (v.is_dict() && o.is_dict()) return &v.entries() == &o.entries();
  return v.kind() == o.kind() && equals(v, o) && (v.is_int() || v.is_string());
}
bool t_filter(Renderer&, const Value& v, const CallArgs&) {
  return v.is_string() && has_filter(v.as_string());
}
bool t_test(Renderer&, const Value& v, const CallArgs&) {
  return v.is_string() && has_test(v.as_string());
}

const std::map<std::string, TestFn>& tests() {
  static const std::map<std::string, TestFn> k = {
      {"boolean", t_boolean},
      {"callable", t_callable},
      {"defined", t_defined},
      {"divisibleby", t_divisibleby},
      {"eq", t_eq},
      {"equalto", t_eq},
      {"==", t_eq},
      {"escaped", t_escaped},
      {"even", t_even},
      {"false", t_false},
      {"filter", t_filter},
      {"float", t_float},
      {"ge", t_ge},
      {">=", t_ge},
      {"gt", t_gt},
      {">", t_gt},
      {"greaterthan", t_gt},
      {"in", t_in},
      {"integer", t_integer},
      {"iterable", t_iterable},
      {"le", t_le},
      {"<=", t_le},
      {"lessthan", t_lt},
      {"lt", t_lt},
      {"<", t_lt},
      {"lower", t_lower},
      {"mapping", t_mapping},
      {"ne", t_ne},
      {"!=", t_ne},
      {"none", t_none},
      {"number", t_number},
      {"odd", t_odd},
      {"sameas", t_sameas},
      {"sequence", t_sequence},
      {"string", t_string},
      {"test", t_test},
      {"true", t_true},
      {"undefined", t_undefined},
      {"upper", t_upper},
  };
  return k;
}

Value apply_filter_impl(Renderer& r, const std::string& name, const Value& input, const CallArgs& args) {
  auto it = filters().find(name);
  if (it == filters().end()) {
    if (unsupported_filters().count(name))
      raise("filter '" + name + "' is not supported by coretrain's template engine");
    raise("No filter named '" + name + "'.");
  }
  return it->second(r, input, args);
}

bool apply_test_impl(Renderer& r, const std::string& name, const Value& input, const CallArgs& args) {
  auto it = tests().find(name);
  if (it == tests().end()) raise("No test named '" + name + "'.");
  return it->second(r, input, args);
}

// ---- globals
// ------------------------------------------------------------------------------------------------

constexpr int64_t kMaxRange = 100000;  // jinja2.sandbox.MAX_RANGE

Value g_range(Renderer&, const CallArgs& a) {
  int64_t start = 0, stop = 0, step = 1;
  auto as_int = [](const Value& v) {
    if (v.is_undefined()) undefined_error(v);
    if (!v.is_int() && !v.is_bool())
      raise("TypeError: '" + v.type_name() + "' object cannot be interpreted as an integer");
    return v.as_int();
  };
  if (a.args.size() == 1) {
    stop = as_int(a.args[0]);
  } else if (a.args.size() == 2 || a.args.size() == 3) {
    start = as_int(a.args[0]);
    stop = as_int(a.args[1]);
    if (a.args.size() == 3) step = as_int(a.args[2]);
  } else {
    raise("TypeError: range expected 1 to 3 arguments, got " + std::to_string(a.args.size()));
  }
  if (step == 0) raise("ValueError: range() arg 3 must not be zero");
  List out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (static_cast<int64_t>(out.size()) >= kMaxRange) {
      raise("OverflowError: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    }
    out.push_back(Value::integer(i));
  }
  std::string shown = "range(" + std::to_string(start) + ", " + std::to_string(stop);
  if (step != 1) shown += ", " + std::to_string(step);
  return Value::view(std::move(out), Value::View::kRange, shown + ")");
}

Dict dict_from(const CallArgs& a, const char* what) {
  Dict d;
  auto put = [&](Value k, Value v) {
    for (auto& [dk, dv] : d) {
      if (equals(dk, k)) {
        dv = std::move(v);
        return;
      }
    }
    d.emplace_back(std::move(k), std::move(v));
  };
  if (a.args.size() > 1) raise(std::string("TypeError: ") + what + " expected at most 1 argument");
  if (!a.args.empty()) {
    const Value& src = a.args[0];
    if (src.is_dict() || src.is_namespace()) {
      for (const auto& [k, v] : src.entries()) put(k, v);
    } else {
      for (const auto& pair : iterate(src)) {
        const List kv = iterate(pair);
        if (kv.size() != 2)
          raise(std::string("ValueError: ") + what + " sequence elements must have length 2");
        put(kv[0], kv[1]);
      }
    }
  }
  for (const auto& [k, v] : a.kwargs) put(Value::string(k), v);
  return d;
}

}  // namespace

bool has_filter(const std::string& name) {
  return filters().count(name) > 0 || unsupported_filters().count(name) > 0;
}
bool has_test(const std::string& name) {
  return tests().count(name) > 0;
}

Value apply_filter(Renderer& r, const std::string& name, const Value& input, const CallArgs& args) {
  return apply_filter_impl(r, name, input, args);
}
bool apply_test(Renderer& r, const std::string& name, const Value& input, const CallArgs& args) {
  return apply_test_impl(r, name, input, args);
}

std::vector<std::pair<std::string, Value>> globals() {
  std::vector<std::pair<std::string, Value>> g;
  g.emplace_back("range", Value::callable("range", g_range));
  g.emplace_back("dict", Value::callable("dict", [](Renderer&, const CallArgs& a) {
                   return Value::dict(dict_from(a, "dict"));
                 }));
  g.emplace_back("namespace", Value::callable("namespace", [](Renderer& r, const CallArgs& a) {
                   Value ns = Value::namespace_(dict_from(a, "namespace"));
                   r.adopt_namespace(ns);
                   return ns;
                 }));
  g.emplace_back("joiner", Value::callable("joiner", [](Renderer&, const CallArgs& a) {
                   const std::string sep = str_arg(a, "sep", 0, ", ");
                   auto used = std::make_shared<bool>(false);
                   return Value::callable("joiner", [sep, used](Renderer&, const CallArgs&) {
                     if (!*used) {
                       *used = true;
                       return Value::string("");
                     }
                     return Value::string(sep);
                   });
                 }));
  // transformers' globals.
  g.emplace_back("raise_exception",
                 Value::callable("raise_exception", [](Renderer&, const CallArgs& a) -> Value {
                   raise(a.args.empty() ? std::string() : to_str(a.args[0]));
                 }));
  g.emplace_back("strftime_now", Value::callable("strftime_now", [](Renderer& r, const CallArgs& a) {
                   const std::string fmt = str_arg(a, "format", 0, "");
                   const std::tm tm = r.now();
                   std::string out(256 + fmt.size() * 16, '\0');
                   const size_t n = fmt.empty() ? 0 : std::strftime(out.data(), out.size(), fmt.c_str(), &tm);
                   if (n == 0 && !fmt.empty())
                     raise("strftime_now: the format " + py::repr(fmt) + " gives no output");
                   out.resize(n);
                   return Value::string(out);
                 }));
  return g;
}

}  // namespace ct::text::jinja

// Python's %-formatting, str.format and arithmetic on engine values; see py_format.h.
#include "text/py_format.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "text/jinja_builtins.h"
#include "text/jinja_error.h"
#include "text/py_text.h"
#include "text/unicode.h"

namespace ct::text::py {

using jinja::Kind;
using jinja::raise;
using jinja::Value;

namespace {

[[noreturn]] void undefined_error(const Value& v) {
  raise(v.undefined_hint());
}

std::string c_format(const std::string& spec, double d) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), spec.c_str(), d);
  return buf;
}

// Python prints inf/nan in lower case for %f/%e/%g and upper case for %F/%E/%G, as C does.
std::string format_float(double d, char type, int precision, bool alt) {
  std::string spec = "%";
  if (alt) spec += "#";
  spec.push_back('.');
  spec.append(std::to_string(precision < 0 ? 6 : precision));
  spec.push_back(type);
  return c_format(spec, d);
}

// format(d, '.p'): CPython's 'g' with Py_DTSF_ADD_DOT_0, which switches to the exponent form one digit
// earlier than 'g' (at exponent >= p - 1) and keeps a ".0" on the fixed form.
std::string empty_type_float(double d, int precision, bool alt) {
  if (!std::isfinite(d)) return format_float(d, 'g', 1, false);
  const int p = precision == 0 ? 1 : precision;
  const std::string sci = format_float(d, 'e', p - 1, alt);
  const size_t e_at = sci.find('e');
  const int exp = std::stoi(sci.substr(e_at + 1));
  auto strip_zeros = [&](std::string m) {
    if (alt || m.find('.') == std::string::npos) return m;
    while (!m.empty() && m.back() == '0') m.pop_back();
    if (!m.empty() && m.back() == '.') m.pop_back();
    return m;
  };
  if (exp < -4 || exp >= p - 1) return strip_zeros(sci.substr(0, e_at)) + sci.substr(e_at);
  std::string fixed = strip_zeros(format_float(d, 'f', p - 1 - exp, alt));
  if (fixed.find('.') == std::string::npos) fixed += ".0";
  return fixed;
}

std::string pad(std::string body, size_t width, char align, const std::string& fill) {
  const size_t n = length(body);
  if (n >= width) return body;
  const size_t gap = width - n;
  std::string f;
  for (size_t k = 0; k < gap; ++k) f += fill;
  if (align == '<') return body + f;
  if (align == '^') {
    std::string l, r;
    for (size_t k = 0; k < gap / 2; ++k) l += fill;
    for (size_t k = 0; k < gap - gap / 2; ++k) r += fill;
    return l + body + r;
  }
  return f + body;
}

std::string group_digits(const std::string& digits, char sep, int every) {
  std::string out;
  const int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % every == 0) out.push_back(sep);
    out.push_back(digits[i]);
  }
  return out;
}

std::string int_digits(int64_t v, char type) {
  const uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (type == 'd' || type == 'n' || type == '\0') return std::to_string(u);
  const int base = type == 'b' ? 2 : type == 'o' ? 8 : 16;
  const char* digits = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out;
  uint64_t x = u;
  do {
    out.insert(out.begin(), digits[x % base]);
    x /= base;
  } while (x);
  return out;
}

int64_t as_integer_for(const Value& v, const char* what) {
  if (v.is_int() || v.is_bool()) return v.as_int();
  if (v.is_float()) {
    if (!std::isfinite(v.as_double())) raise("OverflowError: cannot convert float infinity to integer");
    return static_cast<int64_t>(std::trunc(v.as_double()));
  }
  if (v.is_undefined()) undefined_error(v);
  raise(std::string("TypeError: ") + what + " format: a real number is required, not " + v.type_name());
}

double as_real_for(const Value& v) {
  if (v.is_number()) return v.as_double();
  if (v.is_undefined()) undefined_error(v);
  raise("TypeError: must be real number, not " + v.type_name());
}

}  // namespace

std::string format_value(const Value& v, const std::string& spec) {
  // [[fill]align][sign][z][#][0][width][grouping][.precision][type]
  size_t i = 0;
  std::string fill = " ";
  char align = '\0';
  const std::u32string u = decode(spec);
  size_t k = 0;
  auto is_align = [](char32_t c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (u.size() >= 2 && is_align(u[1])) {
    fill = encode(std::u32string(1, u[0]));
    align = static_cast<char>(u[1]);
    k = 2;
  } else if (!u.empty() && is_align(u[0])) {
    align = static_cast<char>(u[0]);
    k = 1;
  }
  const std::string rest = encode(std::u32string_view(u).substr(k));
  char sign = '-';
  if (i < rest.size() && (rest[i] == '+' || rest[i] == '-' || rest[i] == ' ')) sign = rest[i++];
  if (i < rest.size() && rest[i] == 'z') ++i;
  bool alt = false;
  if (i < rest.size() && rest[i] == '#') {
    alt = true;
    ++i;
  }
  if (i < rest.size() && rest[i] == '0') {
    if (align == '\0') {
      fill = "0";
      align = '=';
    }
    ++i;
  }
  size_t width = 0;
  while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i])))
    width = width * 10 + (rest[i++] - '0');
  char grouping = '\0';
  if (i < rest.size() && (rest[i] == ',' || rest[i] == '_')) grouping = rest[i++];
  int precision = -1;
  if (i < rest.size() && rest[i] == '.') {
    ++i;
    precision = 0;
    while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i])))
      precision = precision * 10 + (rest[i++] - '0');
  }
  char type = '\0';
  if (i < rest.size()) type = rest[i++];
  if (i != rest.size()) raise("ValueError: Invalid format specifier '" + spec + "'");
  if (width > (size_t{1} << 20)) raise("ValueError: format width too large");

  if (v.is_undefined()) undefined_error(v);
  if (v.is_string() || (!v.is_number() && type == '\0') || type == 's') {
    if (!v.is_string() && !(type == '\0' || type == 's')) {
      raise(std::string("ValueError: Unknown format code '") + type + "' for object of type '" +
            v.type_name() + "'");
    }
    if (v.is_string() && type != '\0' && type != 's') {
      raise(std::string("ValueError: Unknown format code '") + type + "' for object of type 'str'");
    }
    std::string s = jinja::to_str(v);
    if (precision >= 0) s = encode(decode(s).substr(0, static_cast<size_t>(precision)));
    if (align == '=') raise("ValueError: '=' alignment not allowed in string format specifier");
    return pad(s, width, align ? align : '<', fill);
  }
  // Numbers.
  std::string body;
  bool negative = false;
  const bool int_type = type == 'd' || type == 'b' || type == 'o' || type == 'x' || type == 'X' ||
                        type == 'c' || type == 'n' || (type == '\0' && !v.is_float());
  if (int_type) {
    if (v.is_float())
      raise(std::string("ValueError: Unknown format code '") + type + "' for object of type 'float'");
    const int64_t x = v.as_int();
    negative = x < 0;
    if (type == 'c') {
      std::string s;
      append_utf8(s, static_cast<char32_t>(x));
      return pad(s, width, align ? align : '<', fill);
    }
    body = int_digits(x, type);
    if (grouping) body = group_digits(body, grouping, (type == 'd' || type == '\0' || type == 'n') ? 3 : 4);
    if (alt && (type == 'b' || type == 'o' || type == 'x' || type == 'X'))
      body = std::string("0") + type + body;
  } else {
    double d = v.as_double();
    negative = std::signbit(d) && !std::isnan(d);
    d = std::fabs(d);
    if (type == '%') {
      body = format_float(d * 100, 'f', precision, alt) + "%";
    } else if (type == '\0') {
      body = precision < 0 ? jinja::float_repr(d) : empty_type_float(d, precision, alt);
    } else if (type == 'f' || type == 'F' || type == 'e' || type == 'E' || type == 'g' || type == 'G') {
      body = format_float(d, type, precision, alt);
    } else {
      raise(std::string("ValueError: Unknown format code '") + type + "' for object of type 'float'");
    }
    if (grouping) {
      const size_t dot = body.find_first_not_of("0123456789");
      body =
          group_digits(body.substr(0, dot), grouping, 3) + (dot == std::string::npos ? "" : body.substr(dot));
    }
  }
  std::string sign_str = negative ? "-" : sign == '+' ? "+" : sign == ' ' ? " " : "";
  if (align == '=') {
    const size_t n = length(sign_str) + length(body);
    std::string f;
    for (size_t p = n; p < width; ++p) f += fill;
    return sign_str + f + body;
  }
  return pad(sign_str + body, width, align ? align : '>', fill);
}

std::string percent_format(const std::string& fmt, const Value& args) {
  std::vector<Value> values;
  const Value* mapping = nullptr;
  if (args.is_tuple()) {
    values = args.items();
  } else {
    if (args.is_dict()) mapping = &args;
    values.push_back(args);
  }
  size_t next = 0;
  bool used_mapping = false;
  auto take = [&]() -> Value {
    if (next >= values.size()) raise("TypeError: not enough arguments for format string");
    return values[next++];
  };
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out.push_back(fmt[i]);
      continue;
    }
    if (++i >= fmt.size()) raise("ValueError: incomplete format");
    Value arg;
    bool have_arg = false;
    if (fmt[i] == '(') {
      if (!mapping) raise("TypeError: format requires a mapping");
      const size_t close = fmt.find(')', i);
      if (close == std::string::npos) raise("ValueError: incomplete format key");
      const Value* v = mapping->find(fmt.substr(i + 1, close - i - 1));
      if (!v) raise("KeyError: " + py::repr(fmt.substr(i + 1, close - i - 1)));
      arg = *v;
      have_arg = true;
      used_mapping = true;
      i = close + 1;
    }
    std::string flags;
    while (i < fmt.size() && std::string("-+ #0").find(fmt[i]) != std::string::npos)
      flags.push_back(fmt[i++]);
    std::string width, precision;
    bool has_precision = false;
    if (i < fmt.size() && fmt[i] == '*') {
      width = std::to_string(as_integer_for(take(), "*"));
      ++i;
    }
    while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i]))) width.push_back(fmt[i++]);
    if (i < fmt.size() && fmt[i] == '.') {
      has_precision = true;
      ++i;
      if (i < fmt.size() && fmt[i] == '*') {
        precision = std::to_string(as_integer_for(take(), "*"));
        ++i;
      }
      while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i])))
        precision.push_back(fmt[i++]);
    }
    while (i < fmt.size() && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
    if (i >= fmt.size()) raise("ValueError: incomplete format");
    const char conv = fmt[i];
    if (conv == '%') {
      out.push_back('%');
      continue;
    }
    if (!have_arg) arg = take();
    if (!width.empty() && std::stoll(width) > (1 << 20)) raise("ValueError: width too big");
    const bool left = flags.find('-') != std::string::npos;
    const size_t w = width.empty() ? 0 : static_cast<size_t>(std::abs(std::stoll(width)));
    std::string body;
    switch (conv) {
      case 's':
      case 'r':
      case 'a': {
        body = conv == 's' ? jinja::to_str(arg) : jinja::repr(arg);
        if (has_precision)
          body = encode(decode(body).substr(0, precision.empty() ? 0 : std::stoul(precision)));
        break;
      }
      case 'd':
      case 'i':
      case 'u':
      case 'o':
      case 'x':
      case 'X': {
        const int64_t x = as_integer_for(arg, conv == 'o' || conv == 'x' || conv == 'X' ? "%x" : "%d");
        std::string digits = int_digits(x, conv == 'i' || conv == 'u' ? 'd' : conv);
        if (has_precision && !precision.empty() && digits.size() < std::stoul(precision)) {
          digits = std::string(std::stoul(precision) - digits.size(), '0') + digits;
        }
        if (flags.find('#') != std::string::npos && (conv == 'o' || conv == 'x' || conv == 'X')) {
          digits = std::string("0") + conv + digits;
        }
        std::string sign = x < 0                                  ? "-"
                           : flags.find('+') != std::string::npos ? "+"
                           : flags.find(' ') != std::string::npos ? " "
                                                                  : "";
        if (!left && flags.find('0') != std::string::npos && sign.size() + digits.size() < w) {
          digits = std::string(w - sign.size() - digits.size(), '0') + digits;
        }
        body = sign + digits;
        break;
      }
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G': {
        std::string spec =
            "%" + flags + width + (has_precision ? "." + (precision.empty() ? "0" : precision) : "") + conv;
        body = c_format(spec, as_real_for(arg));
        break;
      }
      case 'c': {
        if (arg.is_string()) {
          if (length(arg.as_string()) != 1) raise("TypeError: %c requires int or char");
          body = arg.as_string();
        } else {
          append_utf8(body, static_cast<char32_t>(as_integer_for(arg, "%c")));
        }
        break;
      }
      default:
        raise(std::string("ValueError: unsupported format character '") + conv + "'");
    }
    out += pad(body, w, left ? '<' : '>', " ");
  }
  if (!used_mapping && !mapping && next < values.size()) {
    raise("TypeError: not all arguments converted during string formatting");
  }
  return out;
}

std::string str_format(const std::string& fmt, const jinja::CallArgs& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
        out.push_back('}');
        ++i;
        continue;
      }
      raise("ValueError: Single '}' encountered in format string");
    }
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out.push_back('{');
      ++i;
      continue;
    }
    const size_t close = fmt.find('}', i);
    if (close == std::string::npos) raise("ValueError: Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1);
    i = close;
    std::string spec;
    char conversion = '\0';
    if (const size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (const size_t bang = field.find('!'); bang != std::string::npos) {
      if (bang + 2 != field.size()) raise("ValueError: expected ':' after conversion specifier");
      conversion = field[bang + 1];
      field = field.substr(0, bang);
    }
    // field_name: arg_name ("." attribute | "[" index "]")*
    size_t end = field.find_first_of(".[");
    const std::string head = field.substr(0, end);
    Value v;
    if (head.empty()) {
      if (auto_index >= args.args.size())
        raise("IndexError: Replacement index " + std::to_string(auto_index) +
              " out of range for positional args tuple");
      v = args.args[auto_index++];
    } else if (std::isdigit(static_cast<unsigned char>(head[0]))) {
      const size_t k = std::stoul(head);
      if (k >= args.args.size())
        raise("IndexError: Replacement index " + head + " out of range for positional args tuple");
      v = args.args[k];
    } else {
      const Value* kw = args.get(head, -1);
      if (!kw) raise("KeyError: " + py::repr(head));
      v = *kw;
    }
    while (end != std::string::npos && end < field.size()) {
      if (field[end] == '.') {
        const size_t nx = field.find_first_of(".[", end + 1);
        v = jinja::get_attr(
            v, field.substr(end + 1, nx == std::string::npos ? std::string::npos : nx - end - 1));
        end = nx;
      } else {
        const size_t rb = field.find(']', end);
        if (rb == std::string::npos) raise("ValueError: Missing ']' in format string");
        const std::string key = field.substr(end + 1, rb - end - 1);
        const auto as_int = parse_int(key, 10);
        v = jinja::get_item(v, as_int ? Value::integer(*as_int) : Value::string(key));
        end = rb + 1;
      }
      if (v.is_undefined()) undefined_error(v);
    }
    if (conversion == 'r' || conversion == 'a') {
      v = Value::string(jinja::repr(v));
    } else if (conversion == 's') {
      v = Value::string(jinja::to_str(v));
    } else if (conversion != '\0') {
      raise(std::string("ValueError: Unknown conversion specifier ") + conversion);
    }
    out += format_value(v, spec);
  }
  return out;
}

namespace {

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
  raise("TypeError: unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" +
        b.type_name() + "'");
}

Value repeat(const Value& seq, int64_t n, size_t max_bytes) {
  if (n <= 0)
    return seq.is_string() ? Value::string("") : seq.is_tuple() ? Value::tuple({}) : Value::list({});
  if (seq.is_string()) {
    if (static_cast<double>(seq.as_string().size()) * static_cast<double>(n) >
        static_cast<double>(max_bytes)) {
      raise("MemoryError: repeated string over the output limit");
    }
    std::string out;
    out.reserve(seq.as_string().size() * static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) out += seq.as_string();
    return Value::string(std::move(out));
  }
  if (static_cast<double>(seq.items().size()) * static_cast<double>(n) > static_cast<double>(max_bytes) / 8) {
    raise("MemoryError: repeated list over the output limit");
  }
  jinja::List out;
  for (int64_t k = 0; k < n; ++k) out.insert(out.end(), seq.items().begin(), seq.items().end());
  return seq.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

double py_fmod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

}  // namespace

Value binary_op(const std::string& op, const Value& a, const Value& b, size_t max_bytes) {
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  const bool nums = a.is_number() && b.is_number();
  const bool floats = nums && (a.is_float() || b.is_float());
  if (op == "+") {
    if (nums) {
      if (floats) return Value::number(a.as_double() + b.as_double());
      int64_t r;
      if (__builtin_add_overflow(a.as_int(), b.as_int(), &r))
        raise("OverflowError: integer addition overflows 64 bits");
      return Value::integer(r);
    }
    if (a.is_string()) {
      if (!b.is_string()) raise("TypeError: can only concatenate str (not \"" + b.type_name() + "\") to str");
      if (a.as_string().size() + b.as_string().size() > max_bytes)
        raise("MemoryError: string over the output limit");
      return Value::string(a.as_string() + b.as_string());
    }
    if (a.is_list() || a.is_tuple()) {
      if (a.kind() != b.kind()) {
        raise("TypeError: can only concatenate " + a.type_name() + " (not \"" + b.type_name() + "\") to " +
              a.type_name());
      }
      jinja::List out = a.items();
      out.insert(out.end(), b.items().begin(), b.items().end());
      return a.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
    }
    unsupported("+", a, b);
  }
  if (op == "-") {
    if (!nums) unsupported("-", a, b);
    if (floats) return Value::number(a.as_double() - b.as_double());
    int64_t r;
    if (__builtin_sub_overflow(a.as_int(), b.as_int(), &r))
      raise("OverflowError: integer subtraction overflows 64 bits");
    return Value::integer(r);
  }
  if (op == "*") {
    if (nums) {
      if (floats) return Value::number(a.as_double() * b.as_double());
      int64_t r;
      if (__builtin_mul_overflow(a.as_int(), b.as_int(), &r))
        raise("OverflowError: integer multiplication overflows 64 bits");
      return Value::integer(r);
    }
    const bool a_seq = a.is_string() || a.is_list() || a.is_tuple();
    const bool b_seq = b.is_string() || b.is_list() || b.is_tuple();
    if (a_seq && (b.is_int() || b.is_bool())) return repeat(a, b.as_int(), max_bytes);
    if (b_seq && (a.is_int() || a.is_bool())) return repeat(b, a.as_int(), max_bytes);
    if (a_seq || b_seq)
      raise("TypeError: can't multiply sequence by non-int of type '" + (a_seq ? b : a).type_name() + "'");
    unsupported("*", a, b);
  }
  if (op == "/") {
    if (!nums) unsupported("/", a, b);
    if (b.as_double() == 0) raise("ZeroDivisionError: division by zero");
    return Value::number(a.as_double() / b.as_double());
  }
  if (op == "//") {
    if (!nums) unsupported("//", a, b);
    if (b.as_double() == 0) raise("ZeroDivisionError: integer division or modulo by zero");
    if (floats) return Value::number(std::floor(a.as_double() / b.as_double()));
    const int64_t x = a.as_int(), y = b.as_int();
    if (x == std::numeric_limits<int64_t>::min() && y == -1)
      raise("OverflowError: integer division overflows 64 bits");
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return Value::integer(q);
  }
  if (op == "%") {
    if (a.is_string()) return Value::string(percent_format(a.as_string(), b));
    if (!nums) unsupported("%", a, b);
    if (b.as_double() == 0) raise("ZeroDivisionError: integer division or modulo by zero");
    if (floats) return Value::number(py_fmod(a.as_double(), b.as_double()));
    const int64_t x = a.as_int(), y = b.as_int();
    if (y == -1) return Value::integer(0);
    int64_t m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) m += y;
    return Value::integer(m);
  }
  if (op == "**") {
    if (!nums) unsupported("** or pow()", a, b);
    if (!floats && b.as_int() >= 0) {
      int64_t r = 1, base = a.as_int();
      for (int64_t e = b.as_int(); e > 0; e >>= 1) {
        if (e & 1) {
          if (__builtin_mul_overflow(r, base, &r)) raise("OverflowError: integer power overflows 64 bits");
        }
        if (e > 1 && __builtin_mul_overflow(base, base, &base))
          raise("OverflowError: integer power overflows 64 bits");
      }
      return Value::integer(r);
    }
    if (a.as_double() == 0 && b.as_double() < 0)
      raise("ZeroDivisionError: 0.0 cannot be raised to a negative power");
    return Value::number(std::pow(a.as_double(), b.as_double()));
  }
  raise("unknown operator " + op);
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Kind::kUndefined:
      return false;
    case Kind::kString:
      if (!item.is_string()) {
        if (item.is_undefined()) undefined_error(item);
        raise("TypeError: 'in <string>' requires string as left operand, not " + item.type_name());
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Kind::kList:
    case Kind::kTuple:
      for (const auto& x : container.items()) {
        if (jinja::equals(x, item)) return true;
      }
      return false;
    case Kind::kDict:
      return container.find(item) != nullptr;
    default:
      raise("TypeError: argument of type '" + container.type_name() + "' is not iterable");
  }
}

}  // namespace ct::text::py

// Python str methods over UTF-8; see py_text.h. Case mappings are utf8proc's simple ones plus the few full
// (SpecialCasing) mappings Python applies that change a string's length in common text (ß, İ).
#include "text/py_text.h"

#include <utf8proc.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "text/jinja_error.h"
#include "text/unicode.h"

namespace ct::text::py {

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    out.push_back(decode_utf8(s.data() + i, s.size() - i, len));
    i += len;
  }
  return out;
}

std::string encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

size_t length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    decode_utf8(s.data() + i, s.size() - i, len);
    i += len;
    ++n;
  }
  return n;
}

bool isspace(char32_t c) {
  // Python's definition: bidirectional class WS, B or S, or category Zs. That is the White_Space property
  // plus U+001C..U+001F, and leaves nothing else out.
  return (c >= 0x1C && c <= 0x1F) || is_whitespace(c);
}

static utf8proc_category_t category(char32_t c) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(c));
}

bool isprintable(char32_t c) {
  if (c == ' ') return true;
  switch (category(c)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_ZS:
      return false;
    default:
      return true;
  }
}

std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
  const std::u32string u = decode(s);
  const std::u32string set = chars ? decode(*chars) : std::u32string();
  auto drop = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : isspace(c); };
  size_t b = 0, e = u.size();
  if (left) {
    while (b < e && drop(u[b])) ++b;
  }
  if (right) {
    while (e > b && drop(u[e - 1])) --e;
  }
  return encode(std::u32string_view(u).substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit,
                               bool from_right) {
  std::vector<std::string> out;
  if (sep) {
    if (sep->empty()) jinja::raise("ValueError: empty separator");
    if (!from_right) {
      size_t pos = 0;
      while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
        const size_t hit = s.find(*sep, pos);
        if (hit == std::string_view::npos) break;
        out.emplace_back(s.substr(pos, hit - pos));
        pos = hit + sep->size();
      }
      out.emplace_back(s.substr(pos));
      return out;
    }
    size_t end = s.size();
    std::vector<std::string> rev;
    while (maxsplit < 0 || static_cast<int64_t>(rev.size()) < maxsplit) {
      if (end < sep->size()) break;
      const size_t hit = s.rfind(*sep, end - sep->size());
      if (hit == std::string_view::npos) break;
      rev.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
      end = hit;
    }
    rev.emplace_back(s.substr(0, end));
    return std::vector<std::string>(rev.rbegin(), rev.rend());
  }
  // Runs of whitespace; no empty strings; the remainder after maxsplit loses only the whitespace run before
  // it, as CPython's split_whitespace does.
  const std::u32string u = decode(s);
  if (!from_right) {
    size_t i = 0;
    while (true) {
      while (i < u.size() && isspace(u[i])) ++i;
      if (i == u.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
        // The remainder keeps its trailing whitespace, as CPython's split_whitespace copies to the end.
        out.push_back(encode(std::u32string_view(u).substr(i)));
        break;
      }
      size_t j = i;
      while (j < u.size() && !isspace(u[j])) ++j;
      out.push_back(encode(std::u32string_view(u).substr(i, j - i)));
      i = j;
    }
    return out;
  }
  std::vector<std::string> rev;
  size_t e = u.size();
  while (true) {
    while (e > 0 && isspace(u[e - 1])) --e;
    if (e == 0) break;
    if (maxsplit >= 0 && static_cast<int64_t>(rev.size()) == maxsplit) {
      rev.push_back(encode(std::u32string_view(u).substr(0, e)));
      break;
    }
    size_t b = e;
    while (b > 0 && !isspace(u[b - 1])) --b;
    rev.push_back(encode(std::u32string_view(u).substr(b, e - b)));
    e = b;
  }
  return std::vector<std::string>(rev.rbegin(), rev.rend());
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
  const std::u32string u = decode(s);
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t i = 0; i < u.size(); ++i) {
    const char32_t c = u[i];
    const bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D ||
                     c == 0x1E || c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!brk) continue;
    size_t end = i + 1;
    if (c == '\r' && i + 1 < u.size() && u[i + 1] == '\n') end = i + 2;
    out.push_back(encode(std::u32string_view(u).substr(b, (keepends ? end : i) - b)));
    b = end;
    i = end - 1;
  }
  if (b < u.size()) out.push_back(encode(std::u32string_view(u).substr(b)));
  return out;
}

std::string replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count) {
  std::string out;
  if (old.empty()) {
    // Python inserts `repl` between every code point and at both ends.
    const std::u32string u = decode(s);
    int64_t done = 0;
    for (size_t i = 0; i <= u.size(); ++i) {
      if (count < 0 || done < count) {
        out += repl;
        ++done;
      }
      if (i < u.size()) append_utf8(out, u[i]);
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const size_t hit = s.find(old, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(repl);
    pos = hit + old.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

int64_t find(std::string_view s, std::string_view sub, bool from_right) {
  const size_t hit = from_right ? s.rfind(sub) : s.find(sub);
  if (hit == std::string_view::npos) return -1;
  return static_cast<int64_t>(length(s.substr(0, hit)));
}

int64_t count(std::string_view s, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(length(s)) + 1;
  int64_t n = 0;
  for (size_t pos = s.find(sub); pos != std::string_view::npos; pos = s.find(sub, pos + sub.size())) ++n;
  return n;
}

static void append_upper(std::string& out, char32_t c) {
  if (c == 0xDF) {  // ß: Python's full mapping
    out += "SS";
    return;
  }
  append_utf8(out, static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c))));
}

static void append_lower(std::string& out, char32_t c) {
  char32_t buf[2];
  const int n = to_lower(c, buf);
  for (int k = 0; k < n; ++k) append_utf8(out, buf[k]);
}

static void append_title(std::string& out, char32_t c) {
  if (c == 0xDF) {
    out += "Ss";
    return;
  }
  append_utf8(out, static_cast<char32_t>(utf8proc_totitle(static_cast<utf8proc_int32_t>(c))));
}

static bool is_cased(char32_t c) {
  const auto cat = category(c);
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT;
}

std::string upper(std::string_view s) {
  std::string out;
  for (char32_t c : decode(s)) append_upper(out, c);
  return out;
}

std::string lower(std::string_view s) {
  std::string out;
  for (char32_t c : decode(s)) append_lower(out, c);
  return out;
}

std::string title(std::string_view s) {
  std::string out;
  bool prev_cased = false;
  for (char32_t c : decode(s)) {
    if (prev_cased) {
      append_lower(out, c);
    } else {
      append_title(out, c);
    }
    prev_cased = is_cased(c);
  }
  return out;
}

std::string capitalize(std::string_view s) {
  std::string out;
  bool first = true;
  for (char32_t c : decode(s)) {
    if (first) {
      append_title(out, c);
    } else {
      append_lower(out, c);
    }
    first = false;
  }
  return out;
}

std::string swapcase(std::string_view s) {
  std::string out;
  for (char32_t c : decode(s)) {
    const auto cat = category(c);
    if (cat == UTF8PROC_CATEGORY_LU) {
      append_lower(out, c);
    } else if (cat == UTF8PROC_CATEGORY_LL) {
      append_upper(out, c);
    } else {
      append_utf8(out, c);
    }
  }
  return out;
}

bool is_cased_lower(std::string_view s) {
  bool any = false;
  for (char32_t c : decode(s)) {
    const auto cat = category(c);
    if (cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LT) return false;
    if (cat == UTF8PROC_CATEGORY_LL) any = true;
  }
  return any;
}

bool is_cased_upper(std::string_view s) {
  bool any = false;
  for (char32_t c : decode(s)) {
    const auto cat = category(c);
    if (cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT) return false;
    if (cat == UTF8PROC_CATEGORY_LU) any = true;
  }
  return any;
}

template <class Pred>
static bool all_of(std::string_view s, Pred p) {
  const std::u32string u = decode(s);
  if (u.empty()) return false;
  for (char32_t c : u) {
    if (!p(c)) return false;
  }
  return true;
}

static bool alpha(char32_t c) {
  const auto cat = category(c);
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT ||
         cat == UTF8PROC_CATEGORY_LM || cat == UTF8PROC_CATEGORY_LO;
}
static bool digit(char32_t c) {
  return category(c) == UTF8PROC_CATEGORY_ND;
}

bool isalpha(std::string_view s) {
  return all_of(s, alpha);
}
bool isdigit(std::string_view s) {
  return all_of(s, digit);
}
bool isalnum(std::string_view s) {
  return all_of(s, [](char32_t c) { return alpha(c) || digit(c) || category(c) == UTF8PROC_CATEGORY_NL; });
}
bool isspace(std::string_view s) {
  return all_of(s, [](char32_t c) { return isspace(c); });
}

std::string repr(std::string_view s) {
  const std::u32string u = decode(s);
  bool has_single = false, has_double = false;
  for (char32_t c : u) {
    has_single |= c == '\'';
    has_double |= c == '"';
  }
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  static const char* kHex = "0123456789abcdef";
  auto hex = [&](char32_t c, int digits) {
    for (int k = digits - 1; k >= 0; --k) out.push_back(kHex[(c >> (4 * k)) & 0xF]);
  };
  for (char32_t c : u) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      hex(c, 2);
    } else if (c < 0x7F || isprintable(c)) {
      append_utf8(out, c);
    } else if (c <= 0xFF) {
      out += "\\x";
      hex(c, 2);
    } else if (c <= 0xFFFF) {
      out += "\\u";
      hex(c, 4);
    } else {
      out += "\\U";
      hex(c, 8);
    }
  }
  out.push_back(quote);
  return out;
}

// Python accepts single underscores between digits; returns the digits without them, or nullopt.
static std::optional<std::string> without_underscores(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 == s.size() || s[i - 1] == '_' ||
          !std::isxdigit(static_cast<unsigned char>(s[i - 1])) ||
          !std::isxdigit(static_cast<unsigned char>(s[i + 1]))) {
        return std::nullopt;
      }
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

std::optional<int64_t> parse_int(std::string_view s, int base) {
  const std::string t = strip(s, std::nullopt, true, true);
  if (t.empty()) return std::nullopt;
  size_t i = 0;
  bool neg = false;
  if (t[0] == '+' || t[0] == '-') {
    neg = t[0] == '-';
    i = 1;
  }
  // int(s, 16) takes a 0x prefix (and 8/0o, 2/0b); base 0 reads the base from the prefix.
  std::string_view body = std::string_view(t).substr(i);
  if (body.size() > 2 && body[0] == '0') {
    const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(body[1])));
    const int prefixed = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (prefixed && (base == prefixed || base == 0)) {
      base = prefixed;
      body.remove_prefix(body[2] == '_' ? 3 : 2);
    }
  }
  if (base == 0) base = 10;
  auto digits = without_underscores(body);
  if (!digits || digits->empty()) return std::nullopt;
  for (char c : *digits) {
    int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
            : std::isalpha(static_cast<unsigned char>(c))
                ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                : 99;
    if (d >= base) return std::nullopt;
  }
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(digits->c_str(), &end, base);
  if (errno == ERANGE || *end != '\0') return std::nullopt;
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

std::optional<double> parse_float(std::string_view s) {
  const std::string t = strip(s, std::nullopt, true, true);
  if (t.empty()) return std::nullopt;
  for (char c : t) {
    const bool ok = std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
                    c == '+' || c == '-' || c == '_' || std::isalpha(static_cast<unsigned char>(c));
    if (!ok) return std::nullopt;
  }
  std::string digits;
  for (char c : t) {
    if (c != '_') digits.push_back(c);
  }
  // strtod also reads hex floats and "infinity"/"nan(...)"; Python's float() takes inf/infinity/nan only.
  if (digits.find_first_of("xX(") != std::string::npos) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (end == digits.c_str() || *end != '\0') return std::nullopt;
  return v;
}

}  // namespace ct::text::py

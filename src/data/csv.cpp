#include "data/csv.h"

#include <cctype>
#include <cstdint>

#include "core/error.h"
#include "data/unicode_util.h"

namespace ct::data {

std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& source,
                                                std::vector<int64_t>* record_lines) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  size_t i = 0;
  int64_t line = 1;
  bool any = false;  // the current record has content (a lone trailing newline ends the file, not a record)
  int64_t record_line = 1;
  auto end_field = [&] {
    row.push_back(std::move(field));
    field.clear();
  };
  auto end_row = [&] {
    end_field();
    rows.push_back(std::move(row));
    if (record_lines) record_lines->push_back(record_line);
    row.clear();
    any = false;
  };
  while (i < text.size()) {
    char c = text[i];
    if (!any && row.empty() && field.empty()) record_line = line;
    if (c == '"' && field.empty()) {
      // A quoted field: up to the next lone quote; "" is one quote.
      const int64_t start_line = line;
      ++i;
      any = true;
      for (;;) {
        if (i >= text.size()) fail(source, ": line ", start_line, ": unterminated quoted field");
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (text[i] == '\n') ++line;
        field += text[i++];
      }
      if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
        fail(source, ": line ", line, ": unexpected character after a closing quote");
      continue;
    }
    if (c == ',') {
      end_field();
      any = true;
      ++i;
    } else if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      ++i;
      ++line;
      if (any || !field.empty() || !row.empty()) end_row();
    } else {
      field += c;
      any = true;
      ++i;
    }
  }
  if (any || !field.empty() || !row.empty()) end_row();
  return rows;
}

namespace {

struct PyParser {
  std::string_view s;
  const std::string& what;
  size_t i = 0;

  [[noreturn]] void error(const std::string& msg) const {
    fail(what, ": ", msg, " at character ", i, " of the Python literal");
  }
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) error(str("expected '", c, "'"));
  }
  bool word(std::string_view w) {
    ws();
    if (s.substr(i, w.size()) == w &&
        (i + w.size() >= s.size() ||
         !(std::isalnum(static_cast<unsigned char>(s[i + w.size()])) || s[i + w.size()] == '_'))) {
      i += w.size();
      return true;
    }
    return false;
  }

  uint32_t hex(size_t n) {
    if (i + n > s.size()) error("short \\x/\\u escape");
    uint32_t v = 0;
    for (size_t k = 0; k < n; ++k) {
      const char c = s[i++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<uint32_t>(c - 'A' + 10);
      else
        error("bad hex digit in an escape");
    }
    return v;
  }
  std::string string() {
    const char q = s[i++];
    std::string out;
    for (;;) {
      if (i >= s.size()) error("unterminated string");
      const char c = s[i++];
      if (c == q) break;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i >= s.size()) error("unterminated string");
      const char e = s[i++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case '0':
          out += '\0';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case '\\':
          out += '\\';
          break;
        case '\'':
          out += '\'';
          break;
        case '"':
          out += '"';
          break;
        case '\n':
          break;
        case 'x':
          append_utf8(out, hex(2));
          break;
        case 'u':
          append_utf8(out, hex(4));
          break;
        case 'U':
          append_utf8(out, hex(8));
          break;
        default:
          out += '\\';
          out += e;
      }
    }
    return out;
  }
  nlohmann::json number() {
    const size_t b = i;
    if (s[i] == '-' || s[i] == '+') ++i;
    bool is_float = false;
    while (i < s.size() &&
           (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == 'e' || s[i] == 'E' ||
            ((s[i] == '-' || s[i] == '+') && (s[i - 1] == 'e' || s[i - 1] == 'E')))) {
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) is_float = true;
      ++i;
    }
    const std::string t(s.substr(b, i - b));
    try {
      if (is_float) return std::stod(t);
      return std::stoll(t);
    } catch (const std::exception&) {
      i = b;
      error("bad number");
    }
  }
  nlohmann::json value() {
    ws();
    if (i >= s.size()) error("unexpected end");
    const char c = s[i];
    if (c == '{') {
      ++i;
      nlohmann::json obj = nlohmann::json::object();
      if (eat('}')) return obj;
      do {
        ws();
        if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) error("expected a string key");
        std::string k = string();
        expect(':');
        obj[k] = value();
      } while (eat(',') && !(ws(), i < s.size() && s[i] == '}'));
      expect('}');
      return obj;
    }
    if (c == '[' || c == '(') {
      const char close = c == '[' ? ']' : ')';
      ++i;
      nlohmann::json arr = nlohmann::json::array();
      if (eat(close)) return arr;
      do {
        arr.push_back(value());
      } while (eat(',') && !(ws(), i < s.size() && s[i] == close));
      expect(close);
      return arr;
    }
    if (c == '\'' || c == '"') return string();
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+') return number();
    if (word("True")) return true;
    if (word("False")) return false;
    if (word("None")) return nullptr;
    if (word("array")) {  // numpy's repr: array([...], dtype=object)
      expect('(');
      nlohmann::json v = value();
      if (eat(',')) {
        ws();
        while (i < s.size() && s[i] != ')') ++i;  // dtype=...
      }
      expect(')');
      return v;
    }
    error("unexpected character");
  }
};

}  // namespace

nlohmann::json parse_python_literal(std::string_view text, const std::string& what) {
  PyParser p{text, what};
  nlohmann::json v = p.value();
  p.ws();
  if (p.i != text.size()) p.error("trailing characters");
  return v;
}

}  // namespace ct::data

// Jinja2's lexer (jinja2/lexer.py, tokeniter) rule for rule, with the regexes written out by hand: the
// text before a tag is matched lazily up to the first `{{`, `{%` or `{#`; lstrip_blocks strips the spaces
// before a block or comment tag only when they start its line; a tag end is only an end while brackets
// inside the tag are balanced.
#include "text/jinja_lexer.h"

#include <cctype>
#include <cstring>

#include "text/jinja_error.h"
#include "text/py_text.h"
#include "text/unicode.h"

namespace ct::text::jinja {
namespace {

class Lexer {
 public:
  explicit Lexer(const std::string& source) : src_(normalize(source)) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const size_t tag = find_tag(pos_);
      std::string text = src_.substr(pos_, (tag == std::string::npos ? src_.size() : tag) - pos_);
      if (tag == std::string::npos) {
        emit(Tok::kText, std::move(text), pos_);
        pos_ = src_.size();
        break;
      }
      const char kind = src_[tag + 1];  // '{', '%' or '#'
      const char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      const bool raw = kind == '%' && is_raw_begin(tag);
      const size_t text_at = pos_;
      apply_left_strip(text, sign, kind != '{');
      if (!text.empty()) emit(Tok::kText, std::move(text), text_at);
      const size_t inner = tag + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
      if (raw) {
        lex_raw(tag);
      } else if (kind == '#') {
        lex_comment(tag, inner);
      } else {
        lex_tag(tag, inner, kind == '{');
      }
    }
    tokens_.push_back(Token{Tok::kEnd, "", 0, 0});
    position(src_.size(), tokens_.back().line, tokens_.back().column);
    return std::move(tokens_);
  }

 private:
  // Jinja splits on \r\n, \r and \n, joins with \n, and (keep_trailing_newline off) drops one final newline.
  static std::string normalize(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\r') {
        out.push_back('\n');
        if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
      } else {
        out.push_back(s[i]);
      }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  void position(size_t at, int& line, int& column) const {
    // Incremental (tokens come in source order; an error may point back at its tag, which rescans), so a
    // long one-line template costs linear time, not quadratic.
    if (at < scan_) scan_ = 0, cur_line_ = 1, cur_column_ = 1;
    for (; scan_ < at && scan_ < src_.size(); ++scan_) {
      const unsigned char c = static_cast<unsigned char>(src_[scan_]);
      if (c == '\n') {
        ++cur_line_;
        cur_column_ = 1;
      } else if ((c & 0xC0) != 0x80) {
        ++cur_column_;  // a code point starts here (columns count code points)
      }
    }
    line = cur_line_;
    column = cur_column_;
  }

  void emit(Tok type, std::string text, size_t at) {
    Token t{type, std::move(text)};
    position(at, t.line, t.column);
    tokens_.push_back(std::move(t));
  }

  [[noreturn]] void fail(const std::string& msg, size_t at) const {
    int line = 1, column = 1;
    position(at, line, column);
    throw JinjaError(msg, line, column);
  }

  size_t find_tag(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string::npos;
  }

  bool ws_at(size_t i) const {
    if (i >= src_.size()) return false;
    size_t len = 1;
    return py::isspace(decode_utf8(src_.data() + i, src_.size() - i, len));
  }
  size_t skip_ws(size_t i) const {
    while (i < src_.size()) {
      size_t len = 1;
      if (!py::isspace(decode_utf8(src_.data() + i, src_.size() - i, len))) break;
      i += len;
    }
    return i;
  }
  bool starts(size_t i, const char* s) const {
    return src_.compare(i, std::char_traits<char>::length(s), s) == 0;
  }

  // `{%[-+]?\s*raw\s*(-%}\s*|%})`: the end of it, or npos.
  size_t raw_begin_end(size_t tag) const {
    size_t i = tag + 2;
    if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) ++i;
    i = skip_ws(i);
    if (!starts(i, "raw")) return std::string::npos;
    i = skip_ws(i + 3);
    if (starts(i, "-%}")) return skip_ws(i + 3);
    if (starts(i, "%}")) return i + 2;
    return std::string::npos;
  }
  bool is_raw_begin(size_t tag) const { return raw_begin_end(tag) != std::string::npos; }

  // The text before a tag: `-` strips all whitespace, else lstrip_blocks strips the indentation of a block
  // or comment tag that starts its line.
  void apply_left_strip(std::string& text, char sign, bool block_or_comment) const {
    if (sign == '-') {
      text = py::strip(text, std::nullopt, false, true);
      return;
    }
    if (sign == '+' || !block_or_comment) return;
    const size_t nl = text.rfind('\n');
    const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
    if (l_pos == 0 && !line_starting_) return;
    if (l_pos == text.size()) return;
    for (size_t i = l_pos; i < text.size();) {
      size_t len = 1;
      if (!py::isspace(decode_utf8(text.data() + i, text.size() - i, len))) return;
      i += len;
    }
    text.resize(l_pos);
  }

  // After a block or comment end: `+` keeps everything, `-` eats all whitespace, else trim_blocks eats one
  // \n.
  size_t after_end(size_t end_begin, size_t delim_len, char sign) {
    size_t i = end_begin + delim_len;
    if (sign == '-') {
      i = skip_ws(i);
    } else if (sign != '+' && i < src_.size() && src_[i] == '\n') {
      ++i;
    }
    line_starting_ = i > 0 && src_[i - 1] == '\n';
    return i;
  }

  void lex_comment(size_t tag, size_t inner) {
    for (size_t i = src_.find("#}", inner); i != std::string::npos; i = src_.find("#}", i + 1)) {
      const char before = i > inner ? src_[i - 1] : '\0';
      const char sign = (before == '-' || before == '+') ? before : '\0';
      pos_ = after_end(i, 2, sign);
      return;
    }
    fail("Missing end of comment tag", tag);
  }

  void lex_raw(size_t tag) {
    const size_t body = raw_begin_end(tag);
    for (size_t i = src_.find("{%", body); i != std::string::npos; i = src_.find("{%", i + 1)) {
      size_t j = i + 2;
      char sign = '\0';
      if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) sign = src_[j++];
      j = skip_ws(j);
      if (!starts(j, "endraw")) continue;
      j = skip_ws(j + 6);
      char end_sign = '\0';
      if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) end_sign = src_[j++];
      if (!starts(j, "%}")) continue;
      std::string text = src_.substr(body, i - body);
      line_starting_ = body > 0 && src_[body - 1] == '\n';
      apply_left_strip(text, sign, true);
      if (!text.empty()) emit(Tok::kText, std::move(text), body);
      pos_ = after_end(j, 2, end_sign);
      return;
    }
    fail("Missing end of raw directive", tag);
  }

  void lex_tag(size_t tag, size_t inner, bool variable) {
    emit(variable ? Tok::kVarBegin : Tok::kBlockBegin, "", tag);
    std::vector<char> brackets;
    size_t i = inner;
    while (true) {
      if (i >= src_.size())
        fail(variable ? "unexpected end of template, expected '}}'"
                      : "unexpected end of template, expected '%}'",
             tag);
      if (brackets.empty()) {
        if (variable) {
          if (starts(i, "-}}")) {
            emit(Tok::kVarEnd, "", i);
            pos_ = skip_ws(i + 3);
            line_starting_ = pos_ > 0 && src_[pos_ - 1] == '\n';
            return;
          }
          if (starts(i, "}}")) {
            emit(Tok::kVarEnd, "", i);
            pos_ = i + 2;
            line_starting_ = false;
            return;
          }
        } else {
          for (char sign : {'+', '-', '\0'}) {
            const size_t at = sign ? i + 1 : i;
            if ((sign == '\0' || src_[i] == sign) && starts(at, "%}")) {
              emit(Tok::kBlockEnd, "", i);
              pos_ = after_end(at, 2, sign);
              return;
            }
          }
        }
      }
      if (ws_at(i)) {
        i = skip_ws(i);
        continue;
      }
      i = lex_expression_token(i, brackets);
    }
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }
  static bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

  // (\d+_)*\d+ at i: its end, or npos.
  size_t digits(size_t i) const {
    if (i >= src_.size() || !digit(src_[i])) return std::string::npos;
    while (true) {
      while (i < src_.size() && digit(src_[i])) ++i;
      if (i + 1 < src_.size() && src_[i] == '_' && digit(src_[i + 1])) {
        ++i;
        continue;
      }
      return i;
    }
  }

  size_t lex_expression_token(size_t i, std::vector<char>& brackets) {
    const char c = src_[i];
    if (digit(c)) return lex_number(i);
    if (ident_start(c)) {
      size_t j = i;
      while (j < src_.size() && ident(src_[j])) ++j;
      emit(Tok::kName, src_.substr(i, j - i), i);
      return j;
    }
    if (c == '\'' || c == '"') return lex_string(i);
    static const char* kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : kTwo) {
      if (starts(i, op)) {
        emit(Tok::kOperator, op, i);
        return i + 2;
      }
    }
    static const std::string kOne = "+-/*%~[](){}><=.:|,;";
    if (kOne.find(c) == std::string::npos) {
      size_t len = 1;
      const char32_t cp = decode_utf8(src_.data() + i, src_.size() - i, len);
      fail("unexpected char " + py::repr(py::encode(std::u32string(1, cp))) + " at " + std::to_string(i), i);
    }
    if (c == '(' || c == '[' || c == '{') {
      brackets.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (brackets.empty()) fail(std::string("unexpected '") + c + "'", i);
      const char want = brackets.back();
      brackets.pop_back();
      if (want != c) fail(std::string("unexpected '") + c + "', expected '" + want + "'", i);
    }
    emit(Tok::kOperator, std::string(1, c), i);
    return i + 1;
  }

  size_t lex_number(size_t i) {
    // Floats first, as Jinja tries its float rule before the integer rule.
    const size_t int_end = digits(i);
    size_t j = int_end;
    bool is_float = false;
    if (j + 1 < src_.size() && src_[j] == '.' && digit(src_[j + 1])) {
      j = digits(j + 1);
      is_float = true;
    }
    if (j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
      size_t k = j + 1;
      if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
      const size_t e = digits(k);
      if (e != std::string::npos) {
        j = e;
        is_float = true;
      }
    }
    auto clean = [](std::string s) {
      std::string out;
      for (char ch : s) {
        if (ch != '_') out.push_back(ch);
      }
      return out;
    };
    if (is_float) {
      emit(Tok::kFloat, clean(src_.substr(i, j - i)), i);
      return j;
    }
    if (src_[i] == '0' && i + 1 < src_.size() && std::strchr("bBoOxX", src_[i + 1]) && src_[i + 1] != '\0') {
      const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(src_[i + 1])));
      auto ok = [&](char ch) {
        return p == 'b'   ? (ch == '0' || ch == '1')
               : p == 'o' ? (ch >= '0' && ch <= '7')
                          : std::isxdigit(static_cast<unsigned char>(ch)) != 0;
      };
      size_t k = i + 2;
      bool any = false;
      while (k < src_.size()) {
        if (src_[k] == '_' && k + 1 < src_.size() && ok(src_[k + 1])) {
          k += 2;
          any = true;
        } else if (ok(src_[k])) {
          ++k;
          any = true;
        } else {
          break;
        }
      }
      if (any) {
        emit(Tok::kInteger, clean(src_.substr(i, k - i)), i);
        return k;
      }
    }
    if (src_[i] == '0') {
      // `0(_?0)*`: a leading zero is its own token unless only zeros follow.
      size_t k = i + 1;
      while (k < src_.size() &&
             (src_[k] == '0' || (src_[k] == '_' && k + 1 < src_.size() && src_[k + 1] == '0')))
        ++k;
      emit(Tok::kInteger, clean(src_.substr(i, k - i)), i);
      return k;
    }
    emit(Tok::kInteger, clean(src_.substr(i, int_end - i)), i);
    return int_end;
  }

  // Python's "unicode-escape" decoding of the literal's body, which is what Jinja applies.
  size_t lex_string(size_t i) {
    const char quote = src_[i];
    std::string out;
    size_t j = i + 1;
    auto hexval = [&](size_t at, int n) -> long {
      if (at + n > src_.size()) return -1;
      long v = 0;
      for (int k = 0; k < n; ++k) {
        const char h = src_[at + k];
        if (!std::isxdigit(static_cast<unsigned char>(h))) return -1;
        v = v * 16 + (std::isdigit(static_cast<unsigned char>(h))
                          ? h - '0'
                          : std::tolower(static_cast<unsigned char>(h)) - 'a' + 10);
      }
      return v;
    };
    while (true) {
      if (j >= src_.size()) fail("unexpected end of template, unterminated string", i);
      const char c = src_[j];
      if (c == quote) break;
      if (c != '\\') {
        out.push_back(c);
        ++j;
        continue;
      }
      if (j + 1 >= src_.size()) fail("unexpected end of template, unterminated string", i);
      const char e = src_[j + 1];
      j += 2;
      switch (e) {
        case '\n':
          break;  // a line continuation
        case '\\':
          out.push_back('\\');
          break;
        case '\'':
          out.push_back('\'');
          break;
        case '"':
          out.push_back('"');
          break;
        case 'a':
          out.push_back('\a');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'v':
          out.push_back('\v');
          break;
        case 'x':
        case 'u':
        case 'U': {
          const int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          const long v = hexval(j, n);
          if (v < 0 || v > 0x10FFFF) fail(std::string("invalid \\") + e + " escape in string literal", j - 2);
          append_utf8(out, static_cast<char32_t>(v));
          j += n;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            long v = e - '0';
            for (int k = 0; k < 2 && j < src_.size() && src_[j] >= '0' && src_[j] <= '7'; ++k)
              v = v * 8 + (src_[j++] - '0');
            append_utf8(out, static_cast<char32_t>(v));
          } else {
            // Python keeps an unknown escape as written.
            out.push_back('\\');
            out.push_back(e);
          }
      }
    }
    emit(Tok::kString, std::move(out), i);
    return j + 1;
  }

  std::string src_;
  size_t pos_ = 0;
  bool line_starting_ = true;
  std::vector<Token> tokens_;
  mutable size_t scan_ = 0;
  mutable int cur_line_ = 1, cur_column_ = 1;
};

}  // namespace

std::vector<Token> lex(const std::string& source) {
  return Lexer(source).run();
}

}  // namespace ct::text::jinja

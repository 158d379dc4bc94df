#include "data/readme_yaml.h"

#include <cctype>
#include <vector>

#include "core/error.h"

namespace ct::data {

using json = nlohmann::ordered_json;

namespace {

struct Line {
  int indent = 0;
  std::string text;  // without indentation and trailing comment/space
  int number = 0;    // 1-based, for errors
};

// Drops a " #" comment that is outside quotes.
std::string strip_comment(const std::string& s) {
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      if (i == 0 || s[i - 1] == ' ' || s[i - 1] == '[' || s[i - 1] == ',' || s[i - 1] == ':' ||
          s[i - 1] == '-')
        quote = c;
    } else if (c == '#' && (i == 0 || s[i - 1] == ' ')) {
      return s.substr(0, i);
    }
  }
  return s;
}

std::string rtrim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string trim(const std::string& s) {
  size_t b = 0;
  while (b < s.size() && s[b] == ' ') ++b;
  return rtrim(s.substr(b));
}

class Parser {
 public:
  Parser(std::string_view text, std::string source) : source_(std::move(source)) {
    int number = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      std::string raw(text.substr(pos, nl - pos));
      ++number;
      pos = nl + 1;
      raw_.push_back(rtrim(raw));
      int indent = 0;
      while (indent < static_cast<int>(raw.size()) && raw[static_cast<size_t>(indent)] == ' ') ++indent;
      std::string body = rtrim(strip_comment(raw.substr(static_cast<size_t>(indent))));
      if (body.empty()) continue;
      if (body.find('\t') == 0) error(number, "tab indentation");
      lines_.push_back({indent, body, number});
      if (nl == text.size()) break;
    }
  }

  json parse() {
    if (lines_.empty()) return nullptr;
    json v = node(lines_[0].indent);
    if (i_ < lines_.size()) error(lines_[i_].number, "unexpected indentation");
    return v;
  }

 private:
  [[noreturn]] void error(int line, const std::string& msg) const {
    fail(source_, ": YAML line ", line, ": ", msg);
  }

  static bool is_seq_item(const std::string& t) { return t == "-" || t.rfind("- ", 0) == 0; }

  json node(int indent) {
    if (++depth_ > 64) error(lines_[i_].number, "nested deeper than 64");
    json v = is_seq_item(lines_[i_].text) ? seq(indent) : map(indent);
    --depth_;
    return v;
  }

  // Position of the ':' that ends a mapping key (followed by space or end), outside quotes; npos if none.
  static size_t key_colon(const std::string& t) {
    char quote = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      const char c = t[i];
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if ((c == '\'' || c == '"') && i == 0) {
        quote = c;
        continue;
      }
      if (c == '[' || c == '{') return std::string::npos;  // a flow value, not a key
      if (c == ':' && (i + 1 == t.size() || t[i + 1] == ' ')) return i;
    }
    return std::string::npos;
  }

  json seq(int indent) {
    json out = json::array();
    while (i_ < lines_.size() && lines_[i_].indent == indent && is_seq_item(lines_[i_].text)) {
      Line& l = lines_[i_];
      const std::string rest = l.text == "-" ? "" : trim(l.text.substr(2));
      if (rest.empty()) {
        ++i_;
        if (i_ < lines_.size() && lines_[i_].indent > indent)
          out.push_back(node(lines_[i_].indent));
        else
          out.push_back(nullptr);
      } else if (is_seq_item(rest) || key_colon(rest) != std::string::npos) {
        // "- key: v" opens a mapping (or "- - x" a sequence) whose column is where `rest` starts.
        const int col = indent + static_cast<int>(l.text.size() - rest.size());
        l.indent = col;
        l.text = rest;
        out.push_back(node(col));
      } else {
        ++i_;
        out.push_back(scalar(rest, l.number, indent));
      }
    }
    return out;
  }

  json map(int indent) {
    json out = json::object();
    while (i_ < lines_.size() && lines_[i_].indent == indent && !is_seq_item(lines_[i_].text)) {
      const Line l = lines_[i_];
      const size_t c = key_colon(l.text);
      if (c == std::string::npos) error(l.number, "expected 'key: value', got '" + l.text + "'");
      const std::string key = unquote(trim(l.text.substr(0, c)), l.number);
      const std::string value = trim(l.text.substr(c + 1));
      ++i_;
      if (!value.empty()) {
        out[key] = scalar(value, l.number, indent);
      } else if (i_ < lines_.size() && lines_[i_].indent > indent) {
        out[key] = node(lines_[i_].indent);
      } else if (i_ < lines_.size() && lines_[i_].indent == indent && is_seq_item(lines_[i_].text)) {
        out[key] = seq(indent);  // a sequence may sit at its key's indentation
      } else {
        out[key] = nullptr;
      }
    }
    return out;
  }

  std::string unquote(const std::string& s, int line) const {
    if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') {
      std::string out;
      for (size_t i = 1; i + 1 < s.size(); ++i) {
        out += s[i];
        if (s[i] == '\'' && i + 2 < s.size() && s[i + 1] == '\'') ++i;
      }
      return out;
    }
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') {
      std::string out;
      for (size_t i = 1; i + 1 < s.size(); ++i) {
        if (s[i] == '\\' && i + 2 < s.size()) {
          const char e = s[++i];
          out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        } else {
          out += s[i];
        }
      }
      return out;
    }
    if (!s.empty() && (s.front() == '\'' || s.front() == '"')) error(line, "unterminated quoted string " + s);
    return s;
  }

  json flow_list(const std::string& s, int line) {
    json out = json::array();
    const std::string inner = trim(s.substr(1, s.size() - 2));
    if (inner.empty()) return out;
    std::string item;
    char quote = 0;
    int depth = 0;
    for (char c : inner + ",") {
      if (quote) {
        item += c;
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
        item += c;
      } else if (c == '[' || c == '{') {
        ++depth;
        item += c;
      } else if (c == ']' || c == '}') {
        --depth;
        item += c;
      } else if (c == ',' && depth == 0) {
        out.push_back(scalar(trim(item), line, 0));
        item.clear();
      } else {
        item += c;
      }
    }
    return out;
  }

  json scalar(const std::string& s, int line, int indent) {
    if (s.front() == '[') {
      if (s.back() != ']') error(line, "flow list must close on its line");
      return flow_list(s, line);
    }
    if (s.front() == '{') {
      if (s == "{}") return json::object();
      error(line, "non-empty flow mappings are not supported");
    }
    if (s == "|" || s == ">" || s == "|-" || s == ">-" || s == "|+" || s == ">+") {
      // Block scalar: every following line indented deeper (blank lines included).
      std::string out;
      const bool folded = s[0] == '>';
      int block_indent = -1;
      size_t raw_i = static_cast<size_t>(line);  // raw_ index of the next line
      while (raw_i < raw_.size()) {
        const std::string& r = raw_[raw_i];
        int ind = 0;
        while (ind < static_cast<int>(r.size()) && r[static_cast<size_t>(ind)] == ' ') ++ind;
        if (!r.empty() && ind <= indent) break;
        if (block_indent < 0 && !r.empty()) block_indent = ind;
        if (!out.empty()) out += folded ? ' ' : '\n';
        if (!r.empty()) out += r.substr(static_cast<size_t>(std::min(ind, std::max(block_indent, 0))));
        ++raw_i;
      }
      while (i_ < lines_.size() && lines_[i_].number <= static_cast<int>(raw_i)) ++i_;
      return out;
    }
    if (s.front() == '\'' || s.front() == '"') return unquote(s, line);
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    if (s == "null" || s == "~" || s == "Null" || s == "NULL") return nullptr;
    size_t k = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    bool digits = k < s.size() && s.size() - k <= 18;
    for (size_t j = k; j < s.size() && digits; ++j)
      digits = std::isdigit(static_cast<unsigned char>(s[j])) != 0;
    if (digits) return std::stoll(s);
    return s;
  }

  std::string source_;
  std::vector<Line> lines_;
  std::vector<std::string> raw_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

std::string card_front_matter(std::string_view readme) {
  if (readme.substr(0, 3) != "---") return "";
  const size_t first_nl = readme.find('\n');
  if (first_nl == std::string_view::npos || rtrim(std::string(readme.substr(0, first_nl))) != "---")
    return "";
  size_t pos = first_nl + 1;
  while (pos < readme.size()) {
    size_t nl = readme.find('\n', pos);
    if (nl == std::string_view::npos) nl = readme.size();
    if (rtrim(std::string(readme.substr(pos, nl - pos))) == "---")
      return std::string(readme.substr(first_nl + 1, pos - first_nl - 1));
    pos = nl + 1;
  }
  return "";
}

json parse_yaml(std::string_view text, const std::string& source) {
  return Parser(text, source).parse();
}

json card_yaml_section(std::string_view readme, const std::string& key, const std::string& source) {
  const std::string fm = card_front_matter(readme);
  // Lines of the section: from "key:" at column 0 to the next column-0 line that is not a sequence item.
  std::string section;
  bool in = false;
  size_t pos = 0;
  while (pos < fm.size()) {
    size_t nl = fm.find('\n', pos);
    if (nl == std::string::npos) nl = fm.size();
    const std::string line = fm.substr(pos, nl - pos);
    pos = nl + 1;
    const bool top = !line.empty() && line[0] != ' ' && line[0] != '#' && line[0] != '-';
    if (top) {
      if (in) break;
      in = line.rfind(key + ":", 0) == 0;
    }
    if (in) section += line + "\n";
  }
  if (!in && section.empty()) return nullptr;
  const json doc = parse_yaml(section, source);
  return doc.is_object() && doc.contains(key) ? doc[key] : json(nullptr);
}

}  // namespace ct::data

// Template text -> tokens, as Jinja2's lexer cuts it with the options transformers sets (trim_blocks,
// lstrip_blocks; keep_trailing_newline off): newlines normalized to \n, one trailing newline dropped,
// whitespace control (`{%-`, `-%}`, `{%+`, `+%}`) applied to the text between tags, comments and
// `{% raw %}` resolved here, so the parser sees only text, tag delimiters and expression tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ct::text::jinja {

enum class Tok {
  kText,
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,
  kString,   // text holds the decoded literal
  kInteger,  // text holds the digits, underscores removed, with any 0x/0o/0b prefix
  kFloat,
  kOperator,
  kEnd,
};

struct Token {
  Tok type;
  std::string text;
  int line = 1;
  int column = 1;
};

// Throws JinjaError (with line and column) for an unterminated tag, comment or string, or a character no
// token starts with.
std::vector<Token> lex(const std::string& source);

}  // namespace ct::text::jinja

// The chat-template engine on what goldens cannot show: error positions (line and column), the limits that
// keep a hostile template from exhausting memory, stack or time, and a fuzz pass over mutated and truncated
// real templates that must end in a rendering or a ct::Error, never a crash or a hang.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "text/chat_template.h"
#include "text/jinja_parser.h"
#include "text/jinja_render.h"
#include "text/jinja_value.h"

namespace {

using ct::text::ChatTemplate;
using ct::text::ChatTemplateInputs;
using nlohmann::ordered_json;

std::string render(const std::string& src, const ordered_json& messages = ordered_json::array(),
                   const ct::text::jinja::RenderOptions& options = {}) {
  ChatTemplateInputs in;
  in.messages = messages;
  return ChatTemplate(src, "test").apply(in, ordered_json::object(), options).text;
}

std::string error_of(const std::string& src, const ct::text::jinja::RenderOptions& options = {}) {
  try {
    render(src, ordered_json::array(), options);
  } catch (const ct::Error& e) {
    return e.what();
  }
  return "";
}

TEST(JinjaEngine, ErrorsNameLineAndColumn) {
  EXPECT_EQ(error_of("ab\n  {{ nothing.here }}"),
            "chat template test: line 2, column 6: 'nothing' is undefined");
  EXPECT_EQ(error_of("x\ny {{ raise_exception('Roles must alternate') }}"),
            "chat template test: line 2, column 6: Roles must alternate");
  EXPECT_EQ(error_of("{% for m in messages %}\n{% endif %}"),
            "chat template test: line 2, column 4: Encountered unknown tag 'endif'.");
  EXPECT_EQ(
      error_of("abc {{ 'x' + 1 }}"),
      "chat template test: line 1, column 12: TypeError: can only concatenate str (not \"int\") to str");
  // Columns count code points, as the template's author sees them.
  EXPECT_EQ(error_of("日本 {{ (1, 2] }}"),
            "chat template test: line 1, column 12: unexpected ']', expected ')'");
  // A raised message with a newline stays one line.
  EXPECT_EQ(error_of("{{ raise_exception('a\\nb') }}"), "chat template test: line 1, column 4: a\\nb");
}

TEST(JinjaEngine, ParseErrorsForBrokenTemplates) {
  for (const char* bad : {"{% if %}", "{{ }}", "{% for in x %}{% endfor %}", "{% set = 1 %}", "{{ 1 +* 2 }}",
                          "{% macro (a) %}{% endmacro %}", "{{ a[1:2:3:4] }}", "{% break %}", "{{ 'a' is }}",
                          "{% if x %}{% else %}{% else %}{% endif %}", "{{ x|default( }}", "{% endfor %}",
                          "{% generation %}never closed", "{{ a.1b }}"}) {
    SCOPED_TRACE(bad);
    const std::string e = error_of(bad);
    EXPECT_NE(e.find("chat template test: line 1, column "), std::string::npos) << e;
  }
}

TEST(JinjaEngine, LimitsStopRunawayTemplates) {
  ct::text::jinja::RenderOptions o;
  o.limits.max_output_bytes = 1 << 16;
  o.limits.max_loop_iterations = 100000;
  o.limits.max_call_depth = 32;
  EXPECT_NE(error_of("{% for i in range(100000) %}{% for j in range(100) %}{% endfor %}{% endfor %}", o)
                .find("loop iterations"),
            std::string::npos);
  EXPECT_NE(error_of("{% for i in range(10000) %}0123456789{% endfor %}", o).find("output over the limit"),
            std::string::npos);
  EXPECT_NE(error_of("{{ 'x' * 100000000 }}", o).find("limit"), std::string::npos);
  EXPECT_NE(error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", o).find("nested deeper"),
            std::string::npos);
  EXPECT_NE(error_of("{{ range(1000000)|length }}").find("MAX_RANGE"), std::string::npos);
  // Deep nesting is refused by the parser before it can exhaust the stack.
  EXPECT_NE(
      error_of("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}").find("nesting deeper"),
      std::string::npos);
  std::string ifs;
  for (int i = 0; i < 3000; ++i) ifs += "{% if true %}";
  EXPECT_NE(error_of(ifs).find("nesting deeper"), std::string::npos);
  EXPECT_NE(error_of("{{ " + std::string(3000, '-') + "1 }}").find("nesting deeper"), std::string::npos);
  EXPECT_NE(error_of("{{ x" + std::string(3000, '|') + " }}").find("line 1"), std::string::npos);
  // Chains the parser builds in loops, not recursion: as deep as they are long.
  std::string chain = "{{ 1";
  for (int i = 0; i < 200000; ++i) chain += "+1";
  EXPECT_NE(error_of(chain + " }}").find("expression nested deeper"), std::string::npos);
  std::string attrs = "{{ x";
  for (int i = 0; i < 200000; ++i) attrs += ".a";
  EXPECT_NE(error_of(attrs + " }}").find("expression nested deeper"), std::string::npos);
  std::string filters = "{{ 'a'";
  for (int i = 0; i < 200000; ++i) filters += "|trim";
  EXPECT_NE(error_of(filters + " }}").find("expression nested deeper"), std::string::npos);
  // A value nested by a loop, and a namespace that holds itself.
  EXPECT_NE(
      error_of("{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = [ns.l] %}{% endfor %}"
               "{{ ns.l }}")
          .find("values nested deeper than 512"),
      std::string::npos);
  EXPECT_NE(error_of("{% set ns = namespace() %}{% set ns.self = ns %}{{ ns }}").find("RecursionError"),
            std::string::npos);
  // Recursion through macros with deep bodies is bounded by the evaluation depth.
  ct::text::jinja::RenderOptions deep;
  deep.limits.max_call_depth = 1000;
  EXPECT_NE(
      error_of("{% macro f(n) %}{% if true %}{% if true %}{{ f(n + 1) }}{% endif %}{% endif %}{% endmacro %}"
               "{{ f(0) }}",
               deep)
          .find("evaluation nested deeper"),
      std::string::npos);
}

TEST(JinjaEngine, StrftimeNowUsesTheClock) {
  ct::text::jinja::RenderOptions o;
  o.now = [] {
    std::tm tm{};
    tm.tm_year = 124;
    tm.tm_mon = 6;
    tm.tm_mday = 26;
    return tm;
  };
  EXPECT_EQ(render("{{ strftime_now('%d %b %Y') }}", ordered_json::array(), o), "26 Jul 2024");
  // Without a clock given, the system's: the year is this one.
  const std::string year = render("{{ strftime_now('%Y') }}");
  EXPECT_EQ(year.size(), 4u);
  EXPECT_GE(std::stoi(year), 2025);
}

TEST(JinjaEngine, FloatReprIsPythons) {
  using ct::text::jinja::float_repr;
  EXPECT_EQ(float_repr(1.0), "1.0");
  EXPECT_EQ(float_repr(0.1), "0.1");
  EXPECT_EQ(float_repr(1e16), "1e+16");
  EXPECT_EQ(float_repr(123456789012345.6), "123456789012345.6");
  EXPECT_EQ(float_repr(1e-5), "1e-05");
  EXPECT_EQ(float_repr(0.0001), "0.0001");
  EXPECT_EQ(float_repr(-2.5e-300), "-2.5e-300");
  EXPECT_EQ(float_repr(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(float_repr(-0.0), "-0.0");
}

TEST(JinjaEngine, GenerationSpansAreCodePointsAndBytes) {
  ChatTemplateInputs in;
  in.messages = ordered_json::parse(R"([{"role": "assistant", "content": "é👍"}])");
  const auto r = ChatTemplate("日{% generation %}{{ messages[0].content }}{% endgeneration %}!", "t")
                     .apply(in, ordered_json::object());
  ASSERT_EQ(r.generation_chars.size(), 1u);
  EXPECT_EQ(r.generation_chars[0].begin, 1u);
  EXPECT_EQ(r.generation_chars[0].end, 3u);
  EXPECT_EQ(r.generation_bytes[0].begin, 3u);
  EXPECT_EQ(
      r.text.substr(r.generation_bytes[0].begin, r.generation_bytes[0].end - r.generation_bytes[0].begin),
      "é👍");
  EXPECT_TRUE(ChatTemplate("{%- generation -%}x{% endgeneration %}", "t").has_generation_tags());
  EXPECT_FALSE(ChatTemplate("{{ 'generation' }}", "t").has_generation_tags());
}

std::vector<std::string> real_templates() {
  std::vector<std::string> out;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(CORETRAIN_TEST_DATA) + "/chat_templates")) {
    if (e.path().extension() != ".jinja") continue;
    std::ifstream f(e.path(), std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    out.push_back(s.str());
  }
  return out;
}

// Renders or fails with ct::Error; anything else (another exception, a crash, a hang) fails the test.
void must_render_or_error(const std::string& src, const ordered_json& messages) {
  ct::text::jinja::RenderOptions o;
  o.limits.max_output_bytes = 1 << 20;
  o.limits.max_loop_iterations = 200000;
  try {
    render(src, messages, o);
  } catch (const ct::Error&) {
  }
}

TEST(JinjaEngine, FuzzedTemplatesRenderOrFailCleanly) {
  const auto templates = real_templates();
  ASSERT_GT(templates.size(), 10u);
  const ordered_json messages = ordered_json::parse(R"([
    {"role": "system", "content": "s"}, {"role": "user", "content": "u"},
    {"role": "assistant", "content": "a", "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}]},
    {"role": "tool", "content": "t"}, {"role": "user", "content": "u2"}])");
  std::mt19937 rng(1234);
  const std::vector<std::string> pieces = {"{{",         "}}",
                                           "{%",         "%}",
                                           "{#",         "#}",
                                           "-",          "+",
                                           "if",         "for",
                                           "in",         "endif",
                                           "endfor",     "else",
                                           "elif",       "set",
                                           "macro",      "endmacro",
                                           "call",       "endcall",
                                           "generation", "endgeneration",
                                           "raw",        "endraw",
                                           "loop",       "ns.x",
                                           "=",          "|",
                                           "tojson",     "trim",
                                           "(",          ")",
                                           "[",          "]",
                                           "{",          "}",
                                           ":",          ",",
                                           ".",          "'",
                                           "\"",         "\\",
                                           "messages",   "1",
                                           "-1",         "2.5",
                                           "none",       "~",
                                           "*",          "**",
                                           "/",          "//",
                                           "%",          "is",
                                           "not",        "defined",
                                           "namespace(", "range(",
                                           "recursive",  " ",
                                           "\n",         "\t",
                                           "é",          "\xff",
                                           "\xc3",       "break",
                                           "continue",   "with",
                                           "filter",     "upper",
                                           "[::-1]",     "**{}",
                                           "*[]",        "caller()",
                                           "varargs",    "x",
                                           "a,b",        "items()",
                                           "loop(",      "0x",
                                           "1e",         "_"};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  size_t runs = 0;
  for (const std::string& t : templates) {
    // Every truncation point on a stride, which cuts through tags, strings and expressions.
    for (size_t cut = 0; cut < t.size(); cut += 7) {
      must_render_or_error(t.substr(0, cut), messages);
      ++runs;
    }
  }
  while (std::chrono::steady_clock::now() < deadline && runs < 60000) {
    const std::string& t = templates[rng() % templates.size()];
    std::string m = t;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits && !m.empty(); ++k) {
      const size_t at = rng() % m.size();
      switch (rng() % 3) {
        case 0:
          m.erase(at, 1 + rng() % 8);
          break;
        case 1:
          m.insert(at, pieces[rng() % pieces.size()]);
          break;
        default:
          m[at] = static_cast<char>(rng() % 256);
      }
    }
    must_render_or_error(m, messages);
    // Token soup.
    std::string soup;
    for (int k = 0; k < 30; ++k) soup += pieces[rng() % pieces.size()];
    must_render_or_error(soup, messages);
    runs += 2;
  }
  EXPECT_GT(runs, 1000u);
}

}  // namespace

// Every case of data/chat_template_golden.json (made by tools/make_chat_template_golden.py with Python's
// Jinja2 configured as transformers configures it): the rendered text byte for byte, the {% generation %}
// spans, and for the cases Jinja2 fails: an error too, with raise_exception's message verbatim and Jinja2's
// template line.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "text/chat_template.h"
#include "text/jinja_error.h"

namespace {

using nlohmann::ordered_json;

const std::string kData = CORETRAIN_TEST_DATA;

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The generator's FIXED_NOW, 2025-03-07 09:05:03 (a Friday, day 66 of the year).
std::tm fixed_now() {
  std::tm tm{};
  tm.tm_year = 2025 - 1900;
  tm.tm_mon = 2;
  tm.tm_mday = 7;
  tm.tm_hour = 9;
  tm.tm_min = 5;
  tm.tm_sec = 3;
  tm.tm_wday = 5;
  tm.tm_yday = 65;
  return tm;
}

const ordered_json& golden() {
  static const ordered_json g = ordered_json::parse(read(kData + "/chat_template_golden.json"));
  return g;
}

TEST(ChatTemplateGolden, FileHasTheCasesItShould) {
  const auto& cases = golden()["cases"];
  ASSERT_GT(cases.size(), 400u);
  size_t real = 0, adversarial = 0, errors = 0, with_spans = 0;
  for (const auto& c : cases) {
    (c.contains("template_file") ? real : adversarial)++;
    errors += c["expected"].contains("error");
    with_spans += c["expected"].contains("generation") && !c["expected"]["generation"].empty();
  }
  EXPECT_GT(real, 350u);
  EXPECT_GT(adversarial, 70u);
  EXPECT_GT(errors, 30u);
  EXPECT_GT(with_spans, 50u);
}

TEST(ChatTemplateGolden, EveryCaseRendersAsJinja2Does) {
  size_t checked = 0;
  for (const auto& c : golden()["cases"]) {
    const std::string name = c["name"].get<std::string>();
    SCOPED_TRACE(name);
    const std::string source = c.contains("template")
                                   ? c["template"].get<std::string>()
                                   : read(kData + "/chat_templates/" + c["template_file"].get<std::string>());
    const auto& ctx = c["context"];
    const auto& want = c["expected"];
    ct::text::ChatTemplateInputs in;
    in.messages = ctx["messages"];
    in.tools = ctx["tools"];
    in.documents = ctx["documents"];
    in.add_generation_prompt = ctx["add_generation_prompt"].get<bool>();
    in.kwargs = ctx["kwargs"];
    ct::text::jinja::RenderOptions options;
    options.now = fixed_now;
    std::string error;
    ct::text::ChatRendering got;
    try {
      const ct::text::ChatTemplate t(source, name);
      got = t.apply(in, ctx["special_tokens"], options);
    } catch (const ct::Error& e) {
      error = e.what();
    }
    ++checked;
    if (want.contains("error")) {
      ASSERT_FALSE(error.empty()) << "Jinja2 fails with " << want["error_type"].get<std::string>() << ": "
                                  << want["error"].get<std::string>() << "; we rendered "
                                  << ordered_json(got.text).dump();
      EXPECT_EQ(error.find('\n'), std::string::npos) << error;
      if (want["raised"].get<bool>()) {
        const std::string msg =
            ": " + ct::text::jinja::JinjaError::one_line(want["error"].get<std::string>());
        ASSERT_GE(error.size(), msg.size());
        EXPECT_EQ(error.substr(error.size() - msg.size()), msg) << error;
      }
      if (!want["line"].is_null()) {
        EXPECT_NE(error.find("line " + std::to_string(want["line"].get<int>()) + ", column "),
                  std::string::npos)
            << error << " (Jinja2: line " << want["line"] << ")";
      }
      continue;
    }
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(ordered_json(got.text).dump(), want["text"].dump());
    ASSERT_EQ(got.generation_chars.size(), want["generation"].size());
    for (size_t i = 0; i < got.generation_chars.size(); ++i) {
      EXPECT_EQ(got.generation_chars[i].begin, want["generation"][i][0].get<size_t>());
      EXPECT_EQ(got.generation_chars[i].end, want["generation"][i][1].get<size_t>());
      // The byte spans cut the same text out of the UTF-8 rendering.
      const auto& b = got.generation_bytes[i];
      ASSERT_LE(b.end, got.text.size());
      EXPECT_GE(b.end, b.begin);
    }
  }
  EXPECT_EQ(checked, golden()["cases"].size());
}

}  // namespace

// Where a tokenizer folder keeps its chat template and which one apply_chat_template uses (transformers'
// from_pretrained and get_chat_template), the special tokens the template sees, and `coretrain
// chat-template` end to end.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "text/chat_template.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

class ChatTemplateFiles : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) / ("chat_files_" + std::to_string(::getpid()) + "_" +
                                           testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::binary) << text;
  }
  fs::path dir_;
};

TEST_F(ChatTemplateFiles, ConfigStringAndSpecialTokens) {
  write("tokenizer_config.json",
        R"({"chat_template": "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}",
    "bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "</s>", "pad_token": null,
    "additional_special_tokens": ["<x>", {"content": "<y>"}]})");
  const auto f = ct::text::read_tokenizer_chat_files(dir_);
  EXPECT_FALSE(f.is_named_set);
  EXPECT_EQ(f.special_tokens, ordered_json::parse(R"({"bos_token": "<s>", "eos_token": "</s>",
    "additional_special_tokens": ["<x>", "<y>"]})"));
  const std::string src = ct::text::select_chat_template(f, std::nullopt, false);
  ct::text::ChatTemplateInputs in;
  in.messages = ordered_json::parse(R"([{"role": "user", "content": "hi"}])");
  EXPECT_EQ(ct::text::ChatTemplate(src, "t").apply(in, f.special_tokens).text, "<s>hi</s>");
}

TEST_F(ChatTemplateFiles, SpecialTokensMapFileFillsGaps) {
  write("tokenizer_config.json", R"({"chat_template": "x", "eos_token": "</s>"})");
  write("special_tokens_map.json", R"({"eos_token": "<ignored>", "unk_token": {"content": "<unk>"}})");
  const auto f = ct::text::read_tokenizer_chat_files(dir_);
  EXPECT_EQ(f.special_tokens, ordered_json::parse(R"({"eos_token": "</s>", "unk_token": "<unk>"})"));
}

TEST_F(ChatTemplateFiles, ChatTemplateJinjaWinsOverConfig) {
  write("tokenizer_config.json", R"({"chat_template": "from config"})");
  write("chat_template.jinja", "from jinja file");
  EXPECT_EQ(ct::text::select_chat_template(ct::text::read_tokenizer_chat_files(dir_), std::nullopt, false),
            "from jinja file");
}

TEST_F(ChatTemplateFiles, NamedListPicksAsGetChatTemplate) {
  write("tokenizer_config.json", R"({"chat_template": [{"name": "default", "template": "D"},
    {"name": "tool_use", "template": "T"}, {"name": "rag", "template": "R"}]})");
  const auto f = ct::text::read_tokenizer_chat_files(dir_);
  EXPECT_TRUE(f.is_named_set);
  EXPECT_EQ(ct::text::select_chat_template(f, std::nullopt, false), "D");
  EXPECT_EQ(ct::text::select_chat_template(f, std::nullopt, true), "T");
  EXPECT_EQ(ct::text::select_chat_template(f, std::string("rag"), true), "R");
  // A name that is not one of them is template text, as transformers takes it.
  EXPECT_EQ(ct::text::select_chat_template(f, std::string("{{ 1 }}"), false), "{{ 1 }}");
}

TEST_F(ChatTemplateFiles, AdditionalTemplatesAndNoDefault) {
  write("chat_template.jinja", "main");
  write("additional_chat_templates/tool_use.jinja", "tools");
  auto f = ct::text::read_tokenizer_chat_files(dir_);
  EXPECT_EQ(ct::text::select_chat_template(f, std::nullopt, true), "tools");
  EXPECT_EQ(ct::text::select_chat_template(f, std::nullopt, false), "main");
  fs::remove(dir_ / "chat_template.jinja");
  f = ct::text::read_tokenizer_chat_files(dir_);
  try {
    ct::text::select_chat_template(f, std::nullopt, false);
    FAIL() << "no default template must be an error";
  } catch (const ct::Error& e) {
    EXPECT_NE(std::string(e.what()).find("none named 'default'"), std::string::npos) << e.what();
  }
}

TEST_F(ChatTemplateFiles, MissingTemplateAndBadConfigAreOneLineErrors) {
  write("tokenizer_config.json", R"({"eos_token": "</s>"})");
  try {
    ct::text::select_chat_template(ct::text::read_tokenizer_chat_files(dir_), std::nullopt, false);
    FAIL();
  } catch (const ct::Error& e) {
    EXPECT_NE(std::string(e.what()).find("--chat_template_path"), std::string::npos) << e.what();
  }
  write("tokenizer_config.json", R"({"chat_template": 5})");
  EXPECT_THROW(ct::text::read_tokenizer_chat_files(dir_), ct::Error);
  write("tokenizer_config.json", R"({"chat_template": [{"name": "x"}]})");
  EXPECT_THROW(ct::text::read_tokenizer_chat_files(dir_), ct::Error);
}

TEST_F(ChatTemplateFiles, ChatTemplatePathFileOrFolder) {
  write("t.jinja", "{{ 'file' }}\n");
  EXPECT_EQ(ct::text::read_chat_template_path(dir_ / "t.jinja"), "{{ 'file' }}\n");
  write("chat_template.jinja", "folder");
  EXPECT_EQ(ct::text::read_chat_template_path(dir_), "folder");
  EXPECT_THROW(ct::text::read_chat_template_path(dir_ / "absent.jinja"), ct::Error);
}

// ---- coretrain chat-template
// -----------------------------------------------------------------------------------

std::string run(const std::string& args, int& rc) {
  const std::string cmd = std::string(CORETRAIN_BIN) + " chat-template " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  for (int c; (c = std::fgetc(p)) != EOF;) out.push_back(static_cast<char>(c));
  rc = pclose(p);
  return out;
}

TEST_F(ChatTemplateFiles, CommandPrintsTheRendering) {
  fs::copy_file(fs::path(CORETRAIN_TEST_DATA) / "chat_templates" / "qwen3.jinja",
                dir_ / "chat_template.jinja");
  write("tokenizer_config.json", R"({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"})");
  write("messages.json", R"([{"role": "user", "content": "Hi"}])");
  int rc = 0;
  std::string out =
      run("--tokenizer_name " + dir_.string() + " --messages " + (dir_ / "messages.json").string() +
              " --add_generation_prompt --kwargs '{\"enable_thinking\": false}'",
          rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n\n");
  // JSON lines of dataset rows, with the training template's generation spans.
  write("rows.jsonl",
        "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", \"content\": "
        "\"b\"}]}\n"
        "[{\"role\": \"user\", \"content\": \"c\"}]\n");
  out = run("--chat_template_path " +
                (fs::path(CORETRAIN_TEST_DATA) / "chat_templates" / "qwen3_training.jinja").string() +
                " --messages " + (dir_ / "rows.jsonl").string() + " --json",
            rc);
  EXPECT_EQ(rc, 0) << out;
  const auto nl = out.find('\n');
  ASSERT_NE(nl, std::string::npos);
  const auto first = ordered_json::parse(out.substr(0, nl));
  EXPECT_EQ(first["text"],
            "<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nb<|im_end|>\n");
  EXPECT_EQ(first["generation_spans"], ordered_json::parse("[[51, 82]]"));  // as Jinja2 gives it
  EXPECT_EQ(ordered_json::parse(out.substr(nl + 1))["text"], "<|im_start|>user\nc<|im_end|>\n");
}

TEST_F(ChatTemplateFiles, CommandReportsTemplateErrorsOnOneLine) {
  fs::copy_file(fs::path(CORETRAIN_TEST_DATA) / "chat_templates" / "gemma3.jinja",
                dir_ / "chat_template.jinja");
  write("messages.json", R"([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])");
  int rc = 0;
  const std::string out =
      run("--tokenizer_name " + dir_.string() + " --messages " + (dir_ / "messages.json").string(), rc);
  EXPECT_NE(rc, 0);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find("Conversation roles must alternate user/assistant/user/assistant/..."),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("line "), std::string::npos) << out;
}

}  // namespace

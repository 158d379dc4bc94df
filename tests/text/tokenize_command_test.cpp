// `coretrain tokenize` and `coretrain bench tokenize-text` end to end: JSON lines in, HF's Encoding fields
// out (values checked against HF by tools/compare_with_hf.js; here the plumbing: pairs, windows, padding,
// plain lines, decode, errors).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/fs.h"
#include "pipeline_golden.h"

namespace {

using nlohmann::json;

const std::string kTok = std::string(CORETRAIN_TEST_DATA) + "/tokenizers/bert.json";

// Runs coretrain with `args`, feeding `input` on stdin; returns stdout+stderr lines and sets `rc`. The input
// file is this process's own: ctest runs the tests of this file as parallel processes, and a shared name let
// one test truncate the file another's coretrain was reading (it then printed nothing and exited 0).
std::vector<std::string> run(const std::string& args, const std::string& input, int& rc) {
  const std::string in_path =
      testing::TempDir() + "tokenize_command_in." + std::to_string(::getpid()) + ".txt";
  FILE* f = std::fopen(in_path.c_str(), "w");
  std::fputs(input.c_str(), f);
  std::fclose(f);
  const std::string cmd = std::string(CORETRAIN_BIN) + " " + args + " < " + in_path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::vector<std::string> lines;
  std::string cur;
  for (int c; (c = std::fgetc(p)) != EOF;) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(c));
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  rc = pclose(p);
  return lines;
}

TEST(TokenizeCommand, PrintsEncodingsAsJsonLines) {
  int rc = 0;
  const auto out = run("tokenize --tokenizer_name " + kTok,
                       "hello world\n{\"text\": \"hello\", \"text_pair\": \"world\"}\n", rc);
  ASSERT_EQ(rc, 0) << (out.empty() ? "" : out[0]);
  ASSERT_EQ(out.size(), 2u);
  const json a = json::parse(out[0]), b = json::parse(out[1]);
  EXPECT_EQ(a["tokens"], json({"[CLS]", "hello", "world", "[SEP]"}));
  EXPECT_EQ(a["offsets"], json::parse("[[0,0],[0,5],[6,11],[0,0]]"));
  EXPECT_EQ(a["word_ids"], json::parse("[null,0,1,null]"));
  EXPECT_EQ(b["type_ids"], json({0, 0, 0, 1, 1}));
  EXPECT_EQ(b["sequence_ids"], json::parse("[null,0,null,1,null]"));
}

// A folder holding `tokenizer_json` and, unless null, `config` as tokenizer_config.json.
std::string tokenizer_dir(const std::string& name, const json& tokenizer_json, const json& config) {
  const std::string dir = testing::TempDir() + "tokenize_command_" + name + "." + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  ct::fs::write_file_atomic(dir + "/tokenizer.json", tokenizer_json.dump());
  if (!config.is_null()) ct::fs::write_file_atomic(dir + "/tokenizer_config.json", config.dump());
  return dir;
}

TEST(TokenizeCommand, WindowsPaddingAndDecode) {
  int rc = 0;
  const std::string dir =
      tokenizer_dir("bert_pad", json::parse(ct::fs::read_file(kTok)), json{{"pad_token", "[PAD]"}});
  auto out = run("tokenize --tokenizer_name " + dir + " --max_length 5 --stride 1 --padding max_length",
                 "hello world hello world\n", rc);
  ASSERT_EQ(rc, 0) << (out.empty() ? "" : out[0]);
  const json e = json::parse(out.at(0));
  EXPECT_EQ(e["ids"].size(), 5u);
  ASSERT_EQ(e["overflowing"].size(), 1u);
  EXPECT_EQ(e["overflowing"][0]["attention_mask"], json({1, 1, 1, 1, 0}));
  // A tokenizer that names no pad token (a bare tokenizer.json without a padding section) is not padded with
  // a guessed one: transformers refuses it too.
  out = run("tokenize --tokenizer_name " + kTok + " --max_length 5 --padding max_length", "hello\n", rc);
  EXPECT_NE(rc, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].find("--padding: " + kTok + " names no pad token"), std::string::npos) << out[0];
  out = run("tokenize --tokenizer_name " + kTok + " --decode", "[2, 349, 350, 3]\n", rc);
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(out.at(0), "\"hello world\"");
}

// run_ner's path from the command line: a RoBERTa folder (the `roberta` golden variant: no prefix space) with
// --add_prefix_space and --is_split_into_words gives HF's encodings of the `roberta_ner` variant, which is
// that tokenizer as RobertaTokenizerFast.from_pretrained(add_prefix_space=True) rebuilds it
// (tools/make_words_golden.js).
TEST(TokenizeCommand, SplitWordsWithAddPrefixSpaceEqualHf) {
  using ct::text::golden::kData;
  const json lists = json::parse(ct::fs::read_file(kData + "/words_golden/word_lists.json"));
  const json g = json::parse(ct::fs::read_file(kData + "/words_golden/roberta_ner.json"));
  const std::string dir = testing::TempDir() + "tokenize_command_roberta";
  std::filesystem::create_directories(dir);
  const json roberta = json::parse(ct::fs::read_file(kData + "/pipeline_golden/roberta.json"));
  ct::fs::write_file_atomic(dir + "/tokenizer.json", ct::text::golden::variant_json(roberta).dump());
  ct::fs::write_file_atomic(dir + "/tokenizer_config.json", R"({"tokenizer_class": "RobertaTokenizer"})");
  std::string input;
  std::vector<json> want;
  for (size_t k = 0; k < g["singles"].size(); k += 3) {
    input += json{{"text", lists[g["singles"][k][0].get<size_t>()]}}.dump() + "\n";
    want.push_back(g["singles"][k][1]);
  }
  for (const auto& p : g["pairs"]) {
    input +=
        json{{"text", lists[p["a"].get<size_t>()]}, {"text_pair", lists[p["b"].get<size_t>()]}}.dump() + "\n";
    want.push_back(p["full"]);
  }
  int rc = 0;
  const auto out =
      run("tokenize --tokenizer_name " + dir + " --add_prefix_space --is_split_into_words", input, rc);
  ASSERT_EQ(rc, 0) << (out.empty() ? "" : out[0]);
  ASSERT_EQ(out.size(), want.size());
  auto nullable = [](const json& v) {
    json a = json::array();
    for (const auto& x : v) a.push_back(x.get<int>() < 0 ? json(nullptr) : x);
    return a;
  };
  for (size_t i = 0; i < want.size(); ++i) {
    const json got = json::parse(out[i]), &w = want[i];
    const json expect = {{"ids", w["ids"]},
                         {"type_ids", w["type_ids"]},
                         {"tokens", w["tokens"]},
                         {"offsets", w["offsets"]},
                         {"attention_mask", w["attn"]},
                         {"special_tokens_mask", w["special"]},
                         {"word_ids", nullable(w["words"])},
                         {"sequence_ids", nullable(w["seq"])}};
    EXPECT_EQ(got, expect) << "line " << i + 1;
  }
}

// Stride windows padded to max_length as transformers' tokenizer call pads them, for tokenizers whose pad
// token is not [PAD] / id 0 (pad id 1, 50256, 2 on the left, a file's own padding section with its type id, a
// config's pad token over the section's): equal to HF's tokenizer given that pad token
// (tools/make_padded_windows_golden.js). The CLI once padded all of them with [PAD] / 0.
TEST(TokenizeCommand, PaddedWindowsUseTheTokenizersPadTokenAsHf) {
  using ct::text::golden::kData;
  const json g = json::parse(ct::fs::read_file(kData + "/padded_windows_golden.json"));
  ASSERT_EQ(g["cases"].size(), 5u);
  for (const auto& c : g["cases"]) {
    const std::string name = c["name"].get<std::string>();
    const std::string dir = tokenizer_dir(name, ct::text::golden::variant_json(c), c["config"]);
    std::string input;
    for (const auto& p : c["pairs"])
      input += json{{"text", p["text"]}, {"text_pair", p["text_pair"]}}.dump() + "\n";
    int rc = 0;
    const auto out = run("tokenize --tokenizer_name " + dir + " --truncation only_second --max_length " +
                             std::to_string(c["max_length"].get<int>()) + " --stride " +
                             std::to_string(c["stride"].get<int>()) + " --padding max_length",
                         input, rc);
    ASSERT_EQ(rc, 0) << name << ": " << (out.empty() ? "" : out[0]);
    ASSERT_EQ(out.size(), c["pairs"].size()) << name;
    size_t padded = 0;
    const std::function<json(const json&)> hf_fields = [&](const json& e) {
      json o;
      for (const char* k : {"ids", "type_ids", "tokens", "offsets", "attention_mask", "special_tokens_mask"})
        o[k] = e[k];
      for (int m : e["attention_mask"]) padded += m == 0;
      if (e.contains("overflowing")) {
        o["overflowing"] = json::array();
        for (const auto& x : e["overflowing"]) o["overflowing"].push_back(hf_fields(x));
      }
      return o;
    };
    for (size_t i = 0; i < out.size(); ++i)
      EXPECT_EQ(hf_fields(json::parse(out[i])), c["pairs"][i]["enc"]) << name << " line " << i + 1;
    EXPECT_GT(padded, 0u) << name << ": no padded window";
  }
}

TEST(TokenizeCommand, BadInputIsOneLineError) {
  int rc = 0;
  auto out = run("tokenize --tokenizer_name " + kTok, "{\"text\": 5}\n", rc);
  EXPECT_NE(rc, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].find("\"text\" must be a string"), std::string::npos) << out[0];
  out = run("tokenize --tokenizer_name /nonexistent/tokenizer.json", "", rc);
  EXPECT_NE(rc, 0);
  EXPECT_EQ(out.size(), 1u);
}

TEST(BenchTokenizeText, Runs) {
  const std::string text = testing::TempDir() + "bench_tokenize_text.txt";
  FILE* f = std::fopen(text.c_str(), "w");
  for (int i = 0; i < 50; ++i) std::fputs("hello world, hello again\n", f);
  std::fclose(f);
  int rc = 0;
  const auto out = run("bench tokenize-text --tokenizer_name " + kTok + " --text_file " + text +
                           " --iters 1 --threads 2 --json",
                       "", rc);
  ASSERT_EQ(rc, 0) << (out.empty() ? "" : out[0]);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(json::parse(out[0])["tokens"], 50 * 11);  // [CLS] hello world , hello a ##g ##a ##i ##n [SEP]
}

}  // namespace

// `coretrain tokenize`: runs a tokenizer.json on text and prints HF's Encoding fields as JSON lines, for
// users and for checking coretrain against HF by hand. Input: the --text values, else stdin lines, each
// either JSON
// ({"text": ..., "text_pair": ...}; "text" a list of words with --is_split_into_words) or plain text.
// Offsets are code-point offsets into each input string, as Python shows them.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/command.h"
#include "core/error.h"
#include "text/hf_tokenizer.h"
#include "train/model_source.h"

namespace {

using ct::text::Encoding;
using nlohmann::json;

json to_json(const Encoding& e) {
  json o;
  o["ids"] = e.ids;
  o["type_ids"] = e.type_ids;
  o["tokens"] = e.tokens;
  json offs = json::array();
  for (auto [b, en] : e.offsets) offs.push_back({b, en});
  o["offsets"] = offs;
  o["attention_mask"] = e.attention_mask;
  o["special_tokens_mask"] = e.special_tokens_mask;
  auto nullable = [](const std::vector<int32_t>& v) {
    json a = json::array();
    for (int32_t x : v) a.push_back(x < 0 ? json(nullptr) : json(x));
    return a;
  };
  o["word_ids"] = nullable(e.word_ids);
  o["sequence_ids"] = nullable(e.sequence_ids());
  if (!e.overflowing.empty()) {
    json over = json::array();
    for (const auto& x : e.overflowing) over.push_back(to_json(x));
    o["overflowing"] = over;
  }
  return o;
}

int run_tokenize(int argc, char** argv) {
  CLI::App app{"Tokenize text with a tokenizer.json and print HF's Encoding fields as JSON lines",
               "coretrain tokenize"};
  std::string tokenizer;
  std::vector<std::string> texts;
  int64_t max_length = 0, stride = 0;
  std::string truncation = "longest_first", padding;
  bool split_words = false, no_special = false, decode = false, add_prefix_space = false;
  app.add_option("--tokenizer_name", tokenizer, "tokenizer.json, a tokenizer folder, or a Hub repo id")
      ->required();
  app.add_option("--text", texts, "input (repeatable), read as a stdin line is; without it, lines of stdin");
  app.add_option("--max_length", max_length, "truncate to this many tokens (0: no truncation)")
      ->check(ct::app::kNonNegative);
  app.add_option("--stride", stride, "overlap of the overflowing windows")->check(ct::app::kNonNegative);
  app.add_option("--truncation", truncation, "longest_first, only_first or only_second");
  app.add_option("--padding", padding, "max_length: pad every encoding to --max_length");
  app.add_flag("--is_split_into_words", split_words, "\"text\" is a list of words");
  app.add_flag("--add_prefix_space", add_prefix_space,
               "as from_pretrained(..., add_prefix_space=True), which run_ner passes for RoBERTa and GPT-2");
  app.add_flag("--no_special_tokens", no_special, "do not add the post-processor's special tokens");
  app.add_flag("--decode", decode, "read lists of ids and print the decoded text");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!std::filesystem::exists(tokenizer)) {
    // A Hub repo id: its tokenizer files through the Hub client and cache, as `coretrain qa` fetches them.
    ct::train::ModelArguments m;
    m.tokenizer_name = tokenizer;
    tokenizer = ct::train::localize_model_sources(m).tokenizer_name;
  }
  ct::text::HfTokenizer tok;
  if (std::filesystem::is_directory(tokenizer)) {
    json overrides = json::object();
    if (add_prefix_space) overrides["add_prefix_space"] = true;
    tok = ct::text::HfTokenizer::from_dir(tokenizer, &overrides);
  } else {
    CT_CHECK(!add_prefix_space,
             "--add_prefix_space: needs a tokenizer folder (it is applied as tokenizer_config.json is)");
    tok = ct::text::HfTokenizer::from_file(tokenizer);
  }
  if (max_length > 0) {
    ct::text::TruncationParams t;
    t.max_length = static_cast<size_t>(max_length);
    t.stride = static_cast<size_t>(stride);
    if (truncation == "only_first") {
      t.strategy = ct::text::TruncationStrategy::kOnlyFirst;
    } else if (truncation == "only_second") {
      t.strategy = ct::text::TruncationStrategy::kOnlySecond;
    } else {
      CT_CHECK(truncation == "longest_first", "--truncation: '", truncation,
               "' is not longest_first, only_first or only_second");
    }
    tok.set_truncation(t);
  } else {
    tok.set_truncation(std::nullopt);
  }
  // As transformers' tokenizer call: its padding replaces the file's, with the tokenizer's own pad token.
  std::optional<ct::text::PaddingParams> pad = tok.call_padding();
  tok.set_padding(std::nullopt);
  if (!padding.empty()) {
    CT_CHECK(padding == "max_length" && max_length > 0,
             "--padding: only max_length (with --max_length) is supported");
    CT_CHECK(pad, "--padding: ", tokenizer,
             " names no pad token (tokenizer_config.json's pad_token or tokenizer.json's padding section); "
             "transformers refuses to pad with it too");
    CT_CHECK(pad->pad_id >= 0, "--padding: ", tokenizer, ": pad_token '", pad->pad_token,
             "' is not in the vocabulary");
    pad->fixed = static_cast<size_t>(max_length);
    tok.set_padding(pad);
  }

  auto handle = [&](const std::string& line, size_t lineno) {
    json in;
    const bool is_json = !line.empty() && (line[0] == '{' || line[0] == '[') && json::accept(line);
    if (decode) {
      CT_CHECK(is_json && json::parse(line).is_array(), "line ", lineno, ": --decode expects a list of ids");
      std::vector<int32_t> ids = json::parse(line).get<std::vector<int32_t>>();
      std::printf("%s\n", json(tok.decode(ids, true)).dump().c_str());
      return;
    }
    in = is_json ? json::parse(line) : json{{"text", line}};
    CT_CHECK(in.is_object() && in.contains("text"), "line ", lineno,
             ": expected {\"text\": ...} or plain text");
    const bool add = !no_special;
    const auto unit = ct::text::OffsetUnit::kChar;
    Encoding e;
    if (split_words) {
      CT_CHECK(in["text"].is_array(), "line ", lineno, ": --is_split_into_words needs \"text\" to be a list");
      const auto a = in["text"].get<std::vector<std::string>>();
      if (in.contains("text_pair") && !in["text_pair"].is_null()) {
        const auto b = in["text_pair"].get<std::vector<std::string>>();
        e = tok.encode_words(a, &b, add, unit);
      } else {
        e = tok.encode_words(a, nullptr, add, unit);
      }
    } else {
      CT_CHECK(in["text"].is_string(), "line ", lineno, ": \"text\" must be a string");
      if (in.contains("text_pair") && !in["text_pair"].is_null()) {
        CT_CHECK(in["text_pair"].is_string(), "line ", lineno, ": \"text_pair\" must be a string");
        e = tok.encode_pair(in["text"].get<std::string>(), in["text_pair"].get<std::string>(), add, unit);
      } else {
        e = tok.encode(in["text"].get<std::string>(), add, unit);
      }
    }
    std::printf("%s\n", to_json(e).dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  };
  if (!texts.empty()) {
    for (size_t i = 0; i < texts.size(); ++i) handle(texts[i], i + 1);
    return 0;
  }
  std::string line;
  size_t lineno = 0;
  while (std::getline(std::cin, line)) handle(line, ++lineno);
  return 0;
}

}  // namespace

CT_COMMAND("tokenize", "tokenize text with a tokenizer.json and print ids, tokens and offsets as JSON lines",
           run_tokenize);

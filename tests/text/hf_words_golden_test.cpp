// Pre-split words (transformers' is_split_into_words, what `coretrain ner` and `coretrain tokenize
// --is_split_into_words` run: HfTokenizer::encode_words) against HF's own tokenizer (tokenizers 0.23.2, word
// by word through its Node binding as the Rust PreTokenized path runs them; tools/make_words_golden.js): word
// lists (CoNLL-like sentences, empty and all-space words, added tokens inside words, accents, CJK, emoji,
// long words) through 14 tokenizer variants, RoBERTa with add_prefix_space (as transformers forces it for
// pre-split words) among them; singles, stride windows, pairs whole, padded and cut by each truncation
// strategy; every field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/fs.h"
#include "pipeline_golden.h"
#include "text/hf_tokenizer.h"

namespace ct::text {
namespace {

using golden::encoding_json;
using golden::kData;
using golden::truncation_params;
using nlohmann::json;
using Words = std::vector<std::string>;

class WordsGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(WordsGolden, EveryFieldEqualsHf) {
  const auto lists =
      json::parse(fs::read_file(kData + "/words_golden/word_lists.json")).get<std::vector<Words>>();
  const json g = json::parse(fs::read_file(kData + "/words_golden/" + std::string(GetParam()) + ".json"));
  HfTokenizer tok = golden::load_variant(g);
  int bad = 0, n = 0;
  auto check = [&](const json& got, const json& want, const std::string& what) {
    ++n;
    if (got != want && ++bad <= 5)
      ADD_FAILURE() << GetParam() << " " << what << "\n got " << got.dump() << "\nwant " << want.dump();
  };
  for (const auto& s : g["singles"]) {
    const Words& w = lists.at(s[0].get<size_t>());
    check(encoding_json(tok.encode_words(w, nullptr, true, OffsetUnit::kChar), true), s[1],
          "words " + json(w).dump());
  }
  for (const auto& t : g["truncated"]) {
    const Words& w = lists.at(t["i"].get<size_t>());
    tok.set_truncation(truncation_params(t));
    check(encoding_json(tok.encode_words(w, nullptr, true, OffsetUnit::kChar), false), t["enc"],
          "truncated " + t.dump().substr(0, 80) + " words " + json(w).dump());
    tok.set_truncation(std::nullopt);
  }
  for (const auto& p : g["pairs"]) {
    const Words& a = lists.at(p["a"].get<size_t>());
    const Words& b = lists.at(p["b"].get<size_t>());
    const std::string what = json(a).dump() + " + " + json(b).dump();
    check(encoding_json(tok.encode_words(a, &b, true, OffsetUnit::kChar), true), p["full"], "pair " + what);
    if (p.contains("padded")) {
      PaddingParams pp;
      pp.fixed = p["padded"]["length"].get<size_t>();
      pp.left = p["padded"]["left"].get<bool>();
      tok.set_padding(pp);
      check(encoding_json(tok.encode_words(a, &b, true, OffsetUnit::kChar), false), p["padded"]["enc"],
            "padded pair " + what);
      tok.set_padding(std::nullopt);
    }
    if (!p.contains("trunc")) continue;
    const json& t = p["trunc"];
    tok.set_truncation(truncation_params(t));
    if (t.contains("error")) {
      ++n;
      EXPECT_THROW(tok.encode_words(a, &b, true, OffsetUnit::kChar), ct::Error) << t["error"] << " " << what;
    } else {
      check(encoding_json(tok.encode_words(a, &b, true, OffsetUnit::kChar), false), t["enc"],
            "truncated pair " + t.dump().substr(0, 80) + " " + what);
    }
    tok.set_truncation(std::nullopt);
  }
  EXPECT_GT(n, 30);
  EXPECT_EQ(bad, 0) << GetParam() << ": " << bad << " of " << n << " encodings differ from HF";
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, WordsGolden,
                         ::testing::Values("gpt2", "roberta", "roberta_prefix", "llama3_style", "qwen2_style",
                                           "modernbert_style", "llama2_style", "llama2_nonlegacy",
                                           "roberta_ner", "xlmr_style", "unigram_plain", "bert", "bert_misc",
                                           "added_flags"));

}  // namespace
}  // namespace ct::text

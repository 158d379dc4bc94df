// The tokenizer.json engine against HF's own (tokenizers 0.23.2, the Rust crate through its Node binding;
// tools/make_pipeline_golden.js): for each tokenizer under data/tokenizers/ and the variants the golden files
// describe (RoBERTa, Llama-3 and Qwen2 regex splits, ModernBERT template, Llama-2 byte fallback, XLM-R
// precompiled charsmap + Unigram, BERT): 501 single strings (and their decoding), ~70 single texts cut into
// stride windows, 60 pairs whole, padded (left/right, multiple of 8) and cut into windows by each truncation
// strategy; every Encoding field compared.
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

using nlohmann::json;

using golden::encoding_json;
using golden::kData;
using golden::load_variant;
using golden::truncation_params;

class PipelineGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(PipelineGolden, EveryFieldEqualsHf) {
  const auto strings =
      json::parse(fs::read_file(kData + "/pipeline_golden/strings.json")).get<std::vector<std::string>>();
  const json g = json::parse(fs::read_file(kData + "/pipeline_golden/" + std::string(GetParam()) + ".json"));
  HfTokenizer tok = load_variant(g);
  int bad = 0;
  for (const auto& s : g["singles"]) {
    const std::string& text = strings[s[0].get<size_t>()];
    const json got = encoding_json(tok.encode(text, true, OffsetUnit::kChar), true);
    if (got != s[1] && ++bad <= 5) {
      ADD_FAILURE() << GetParam() << " single #" << s[0] << " " << json(text).dump() << "\n got "
                    << got.dump() << "\nwant " << s[1].dump();
    }
    const std::string decoded = tok.decode(s[1]["ids"].get<std::vector<int32_t>>(), true);
    if (decoded != s[2].get<std::string>() && ++bad <= 5) {
      ADD_FAILURE() << GetParam() << " decode #" << s[0] << " got " << json(decoded).dump() << " want "
                    << s[2].dump();
    }
  }
  for (const auto& t : g["truncated"]) {
    const std::string& text = strings[t["i"].get<size_t>()];
    tok.set_truncation(truncation_params(t));
    const json got = encoding_json(tok.encode(text, true, OffsetUnit::kChar), true);
    if (got != t["enc"] && ++bad <= 5) {
      ADD_FAILURE() << GetParam() << " truncated single " << json(text).dump() << "\n got " << got.dump()
                    << "\nwant " << t["enc"].dump();
    }
  }
  tok.set_truncation(std::nullopt);
  for (const auto& p : g["pairs"]) {
    const std::string& a = strings[p["a"].get<size_t>()];
    const std::string& b = strings[p["b"].get<size_t>()];
    tok.set_truncation(std::nullopt);
    const json got = encoding_json(tok.encode_pair(a, b, true, OffsetUnit::kChar), true);
    if (got != p["full"] && ++bad <= 5) {
      ADD_FAILURE() << GetParam() << " pair " << json(a).dump() << " + " << json(b).dump() << "\n got "
                    << got.dump() << "\nwant " << p["full"].dump();
    }
    if (p.contains("padded")) {
      const json& pd = p["padded"];
      PaddingParams pp;
      pp.fixed = pd["length"].get<size_t>();
      pp.left = pd["left"].get<bool>();
      pp.pad_to_multiple_of = pd["multiple"].get<size_t>();
      tok.set_padding(pp);
      const json pgot = encoding_json(tok.encode_pair(a, b, true, OffsetUnit::kChar), true);
      tok.set_padding(std::nullopt);
      if (pgot != pd["enc"] && ++bad <= 5) {
        ADD_FAILURE() << GetParam() << " padded pair " << json(a).dump() << " + " << json(b).dump()
                      << "\n got " << pgot.dump() << "\nwant " << pd["enc"].dump();
      }
    }
    const json& t = p["trunc"];
    tok.set_truncation(truncation_params(t));
    if (t.contains("error")) {
      EXPECT_THROW(tok.encode_pair(a, b, true, OffsetUnit::kChar), ct::Error) << t["error"];
      continue;
    }
    json tgot;
    try {
      tgot = encoding_json(tok.encode_pair(a, b, true, OffsetUnit::kChar), false);
    } catch (const ct::Error& e) {
      tgot = e.what();
    }
    if (tgot != t["enc"] && ++bad <= 5) {
      ADD_FAILURE() << GetParam() << " truncated pair " << t.dump().substr(0, 120) << " " << json(a).dump()
                    << " + " << json(b).dump() << "\n got " << tgot.dump() << "\nwant " << t["enc"].dump();
    }
  }
  EXPECT_EQ(bad, 0) << GetParam() << ": " << bad << " encodings differ from HF";
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, PipelineGolden,
                         ::testing::Values("gpt2", "roberta", "roberta_prefix", "llama3_style", "qwen2_style",
                                           "modernbert_style", "llama2_style", "llama2_nonlegacy",
                                           "xlmr_style", "unigram_plain", "bert", "bert_misc",
                                           "added_flags"));

// 1,500 random strings from a pool of hard pieces (tools/make_random_golden.js): ids and offsets.
class RandomGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(RandomGolden, IdsAndOffsetsEqualHf) {
  const std::string name = GetParam();
  HfTokenizer tok = load_variant(json::parse(fs::read_file(kData + "/pipeline_golden/" + name + ".json")));
  const json g = json::parse(fs::read_file(kData + "/pipeline_golden/random_" + name + ".json"));
  const auto strings = g["strings"].get<std::vector<std::string>>();
  ASSERT_EQ(strings.size(), g["encodings"].size());
  int bad = 0;
  for (size_t i = 0; i < strings.size(); ++i) {
    const Encoding e = tok.encode(strings[i], true, OffsetUnit::kChar);
    json offs = json::array();
    for (auto [b, en] : e.offsets) {
      offs.push_back(b);
      offs.push_back(en);
    }
    const json got = {e.ids, offs};
    if (got != g["encodings"][i] && ++bad <= 5) {
      ADD_FAILURE() << name << " random #" << i << " " << json(strings[i]).dump() << "\n got " << got.dump()
                    << "\nwant " << g["encodings"][i].dump();
    }
  }
  EXPECT_EQ(bad, 0) << name << ": " << bad << " of " << strings.size() << " differ from HF";
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, RandomGolden,
                         ::testing::Values("roberta", "llama3_style", "qwen2_style", "llama2_style",
                                           "xlmr_style", "unigram_plain", "bert_misc"));

}  // namespace
}  // namespace ct::text

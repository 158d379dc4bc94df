// Our tokenizer against HF's own: data/hf_golden.json holds ids and code-point offsets produced by HF
// tokenizers 0.23.2 (the Rust crate, via its Node binding; see tools/make_hf_golden.js) for 426 strings that
// stress clean_text, CJK padding, accent stripping with NFD reordering, Unicode lower-casing, punctuation,
// whitespace, special tokens and WordPiece, under five BertNormalizer option sets.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/fs.h"
#include "text/tokenizer.h"

namespace ct::text {
namespace {

using nlohmann::json;

TEST(HfGolden, IdsAndOffsetsEqualHfTokenizers) {
  const json g = json::parse(fs::read_file(std::string(CORETRAIN_TEST_DATA) + "/hf_golden.json"));
  const auto vocab = g["vocab"].get<std::vector<std::string>>();
  const auto strings = g["strings"].get<std::vector<std::string>>();
  ASSERT_GT(strings.size(), 400u);
  int compared = 0;
  for (const auto& [name, cfg] : g["configs"].items()) {
    TokenizerOptions o;
    o.do_lower_case = cfg["lowercase"].get<bool>();
    o.strip_accents = cfg["strip_accents"].is_null() ? -1 : (cfg["strip_accents"].get<bool>() ? 1 : 0);
    o.tokenize_chinese_chars = cfg["handle_chinese_chars"].get<bool>();
    o.clean_text = cfg["clean_text"].get<bool>();
    const auto tok = Tokenizer::from_vocab(vocab, o);
    const json& expected = g["expected"][name];
    ASSERT_EQ(expected.size(), strings.size());
    for (size_t i = 0; i < strings.size(); ++i) {
      const std::string& s = strings[i];
      std::vector<int> cp_at(s.size() + 1, 0);  // byte offset -> code-point offset
      int n = 0;
      for (size_t b = 0; b < s.size(); ++b) {
        if ((static_cast<unsigned char>(s[b]) & 0xC0) != 0x80) ++n;
        cp_at[b + 1] = n;
      }
      json got = json::array();
      for (const Token& t : tok.encode(s)) got.push_back({t.id, cp_at[t.begin], cp_at[t.end]});
      EXPECT_EQ(got, expected[i]) << "config " << name << " string #" << i << ": " << json(s).dump();
      ++compared;
    }
  }
  EXPECT_EQ(compared, 5 * static_cast<int>(strings.size()));
}

}  // namespace
}  // namespace ct::text

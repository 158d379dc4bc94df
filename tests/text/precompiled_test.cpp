// SentencePiece's nmt_nfkc charsmap (the real one, from data/tokenizers/unigram_nmt.json) through HF's rules:
// shortest prefix match, whole graphemes under 6 bytes, per character otherwise.
#include "text/precompiled.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"

namespace ct::text {
namespace {

Precompiled nmt_nfkc() {
  const auto j =
      nlohmann::json::parse(fs::read_file(std::string(CORETRAIN_TEST_DATA) + "/tokenizers/unigram_nmt.json"));
  return Precompiled(
      base64_decode(j["normalizer"]["normalizers"][0]["precompiled_charsmap"].get<std::string>(), "t"),
      "nmt_nfkc");
}

TEST(Precompiled, RulesOfTheRealCharsmap) {
  const Precompiled p = nmt_nfkc();
  ASSERT_NE(p.transform("\xEF\xAC\x81"), nullptr);  // ﬁ
  EXPECT_STREQ(p.transform("\xEF\xAC\x81"), "fi");
  EXPECT_STREQ(p.transform("\xEF\xBC\xA1"), "A");                         // fullwidth A
  EXPECT_STREQ(p.transform("\xEF\xBD\xB6\xEF\xBE\x9E"), "\xE3\x82\xAB");  // ｶﾞ: the shortest rule, カ
  EXPECT_EQ(p.transform("a"), nullptr);
}

TEST(Precompiled, GraphemesOfSixBytesOrMoreGoCharacterByCharacter) {
  const Precompiled p = nmt_nfkc();
  NormalizedString s("\xEF\xBD\xB6\xEF\xBE\x9E x\xEF\xAC\x81");  // "ｶﾞ xﬁ"
  p.normalize(s);
  EXPECT_EQ(s.get(), "\xE3\x82\xAB\xE3\x82\x99 xfi");  // カ + U+3099, then fi
  EXPECT_EQ(s.to_original(s.get().size() - 1, s.get().size()), (std::pair<size_t, size_t>{8, 11}));
}

}  // namespace
}  // namespace ct::text

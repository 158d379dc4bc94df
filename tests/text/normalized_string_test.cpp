// NormalizedString's alignment rules (HF's transform), on the cases HF's own tests and quirks describe.
#include "text/normalized_string.h"

#include <gtest/gtest.h>

#include "text/normalizers.h"
#include "text/regex.h"

namespace ct::text {
namespace {

std::pair<size_t, size_t> orig(const NormalizedString& n, size_t b, size_t e) {
  return n.to_original(b, e);
}

TEST(NormalizedString, NfdKeepsEveryPieceOnItsCharacter) {
  NormalizedString n("\xC3\xA9x");  // é x
  normalize_unicode(n, NormalForm::kNFD);
  EXPECT_EQ(n.get(), "e\xCC\x81x");
  EXPECT_EQ(orig(n, 0, 1), (std::pair<size_t, size_t>{0, 2}));  // e -> é
  EXPECT_EQ(orig(n, 1, 3), (std::pair<size_t, size_t>{0, 2}));  // the accent -> é
  EXPECT_EQ(orig(n, 3, 4), (std::pair<size_t, size_t>{2, 3}));
}

TEST(NormalizedString, NfcCompositionDeletesTheAbsorbedCharacter) {
  NormalizedString n("e\xCC\x81x");
  normalize_unicode(n, NormalForm::kNFC);
  EXPECT_EQ(n.get(), "\xC3\xA9x");
  EXPECT_EQ(orig(n, 0, 2), (std::pair<size_t, size_t>{0, 1}));  // positional: é takes e's alignment
  EXPECT_EQ(orig(n, 2, 3), (std::pair<size_t, size_t>{3, 4}));
}

TEST(NormalizedString, ReplaceAlignsInsertedTextToTheMatchsLastByte) {
  NormalizedString n("a  b");
  n.replace(find_matches(Regex(" {2,}", "test"), n.get()), "\xE2\x96\x81");
  EXPECT_EQ(n.get(),
            "a\xE2\x96\x81"
            "b");
  EXPECT_EQ(orig(n, 1, 4), (std::pair<size_t, size_t>{2, 3}));
}

TEST(NormalizedString, PrependMapsToTheFirstCharacter) {
  NormalizedString n("ab");
  n.prepend("\xE2\x96\x81");
  EXPECT_EQ(n.get(),
            "\xE2\x96\x81"
            "ab");
  EXPECT_EQ(orig(n, 0, 3), (std::pair<size_t, size_t>{0, 1}));
  EXPECT_EQ(orig(n, 3, 4), (std::pair<size_t, size_t>{0, 1}));
  EXPECT_EQ(orig(n, 4, 5), (std::pair<size_t, size_t>{1, 2}));
}

TEST(NormalizedString, StripAndFilterAndLowercase) {
  NormalizedString n("  A\xC4\xB0 ");  // "  Aİ "
  n.strip(true, true);
  n.lowercase();
  EXPECT_EQ(n.get(), "ai\xCC\x87");  // İ lower-cases to i + combining dot
  EXPECT_EQ(orig(n, 0, 1), (std::pair<size_t, size_t>{2, 3}));
  EXPECT_EQ(orig(n, 1, 4), (std::pair<size_t, size_t>{3, 5}));
  n.filter([](char32_t c) { return c != 0x307; });
  EXPECT_EQ(n.get(), "ai");
  EXPECT_EQ(orig(n, 1, 2), (std::pair<size_t, size_t>{3, 5}));
}

TEST(NormalizedString, SplitBehaviors) {
  const NormalizedString n("a-b--c");
  auto pieces = [&](SplitBehavior b, bool invert = false) {
    std::vector<std::string> out;
    for (const auto& p : n.split(find_matches([](char32_t c) { return c == '-'; }, n.get()), b, invert))
      out.push_back(p.get());
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces(SplitBehavior::kRemoved), (V{"a", "b", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::kIsolated), (V{"a", "-", "b", "-", "-", "c"}));
  // A match joins its neighbour only when that neighbour is no match itself (HF), so "--" splits.
  EXPECT_EQ(pieces(SplitBehavior::kMergedWithPrevious), (V{"a-", "b-", "-", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::kMergedWithNext), (V{"a", "-b", "-", "-c"}));
  EXPECT_EQ(pieces(SplitBehavior::kContiguous), (V{"a", "-", "b", "--", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::kRemoved, true), (V{"-", "-", "-"}));  // each character is its own match
}

TEST(Regex, EmptyMatchRightAfterAMatchIsSkipped) {
  const Regex re("a*", "test");
  const auto m = re.find_all("baab");
  // rust-onig's iteration: "" at 0, "aa" at 1..3, then the empty match at 3 is skipped, "" at 4.
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0], (std::pair<size_t, size_t>{0, 0}));
  EXPECT_EQ(m[1], (std::pair<size_t, size_t>{1, 3}));
  EXPECT_EQ(m[2], (std::pair<size_t, size_t>{4, 4}));
}

}  // namespace
}  // namespace ct::text

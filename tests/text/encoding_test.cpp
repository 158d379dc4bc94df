// Encoding's truncation windows, merging and padding (HF's encoding.rs and truncation.rs rules).
#include "text/encoding.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace ct::text {
namespace {

Encoding make(int n, int first_id = 0) {
  Encoding e;
  for (int i = 0; i < n; ++i) {
    e.push(first_id + i, 0, "t", {static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1)}, i, false);
  }
  return e;
}

TEST(Encoding, RightWindowsOverlapByStride) {
  Encoding e = make(10);
  e.truncate(4, 1, false);
  EXPECT_EQ(e.ids, (std::vector<int32_t>{0, 1, 2, 3}));
  ASSERT_EQ(e.overflowing.size(), 2u);  // windows stop at the one that reaches the end
  EXPECT_EQ(e.overflowing[0].ids, (std::vector<int32_t>{3, 4, 5, 6}));
  EXPECT_EQ(e.overflowing[1].ids, (std::vector<int32_t>{6, 7, 8, 9}));
}

TEST(Encoding, LeftWindowsStartFromTheEnd) {
  Encoding e = make(10);
  e.truncate(4, 1, true);
  EXPECT_EQ(e.ids, (std::vector<int32_t>{6, 7, 8, 9}));
  ASSERT_EQ(e.overflowing.size(), 2u);
  EXPECT_EQ(e.overflowing[0].ids, (std::vector<int32_t>{3, 4, 5, 6}));
  EXPECT_EQ(e.overflowing[1].ids, (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(Encoding, StrideMustBeShorterThanTheWindow) {
  Encoding e = make(10);
  EXPECT_THROW(e.truncate(3, 3, false), ct::Error);
}

TEST(Encoding, LongestFirstSplitsThePairBudget) {
  Encoding a = make(10), b = make(3, 100);
  TruncationParams p;
  p.max_length = 8;
  truncate_encodings(a, &b, p);
  EXPECT_EQ(a.size(), 5u);  // the shorter keeps all 3, the longer gets the rest
  EXPECT_EQ(b.size(), 3u);
  Encoding c = make(10), d = make(9, 100);
  truncate_encodings(c, &d, p);
  EXPECT_EQ(c.size(), 4u);
  EXPECT_EQ(d.size(), 4u);
}

TEST(Encoding, MergeCrossesOverflowsAndPadCoversThem) {
  Encoding a = make(5), b = make(2, 100);
  a.truncate(3, 0, false);
  a.merge_with(b);
  EXPECT_EQ(a.ids, (std::vector<int32_t>{0, 1, 2, 100, 101}));
  ASSERT_EQ(a.overflowing.size(), 1u);
  EXPECT_EQ(a.overflowing[0].ids, (std::vector<int32_t>{3, 4, 100, 101}));
  a.pad(6, 7, 0, "[PAD]", true);
  EXPECT_EQ(a.ids.front(), 7);
  EXPECT_EQ(a.overflowing[0].ids, (std::vector<int32_t>{7, 7, 3, 4, 100, 101}));
  EXPECT_EQ(a.overflowing[0].attention_mask, (std::vector<uint8_t>{0, 0, 1, 1, 1, 1}));
}

}  // namespace
}  // namespace ct::text

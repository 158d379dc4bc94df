// The slices a node's ranks update (train/node_shard.h): they tile the slab in rank order, start on
// 64-element boundaries (no cache line of the f32 state or of the bf16 copies is written by two ranks), are
// within 64 elements of equal, and the decay ranges cut to a slice keep their flags.
#include "train/node_shard.h"

#include <gtest/gtest.h>

#include "core/error.h"

using namespace ct::train;

TEST(NodeShard, SlicesTileTheSlabOnCacheLineBoundaries) {
  for (int64_t n : {0, 1, 63, 64, 65, 1000, 108893186}) {
    for (int ranks : {1, 2, 3, 8}) {
      SCOPED_TRACE(std::to_string(n) + " over " + std::to_string(ranks));
      int64_t prev = 0, smallest = n, largest = 0;
      for (int r = 0; r < ranks; ++r) {
        int64_t lo, hi;
        node_slice(n, r, ranks, lo, hi);
        EXPECT_EQ(lo, prev);
        EXPECT_LE(lo, hi);
        EXPECT_EQ(lo % 64, 0);
        prev = hi;
        smallest = std::min(smallest, hi - lo);
        largest = std::max(largest, hi - lo);
      }
      EXPECT_EQ(prev, n);
      if (n >= 64 * ranks) EXPECT_LE(largest - smallest, 64);
    }
  }
  int64_t lo, hi;
  EXPECT_THROW(node_slice(10, 2, 2, lo, hi), ct::Error);
}

TEST(NodeShard, RangesCutToASliceKeepTheirDecayFlags) {
  const std::vector<ct::kernels::SlabRange> ranges = {{0, 100, true}, {100, 10, false}, {110, 90, true}};
  const auto cut = clip_ranges(ranges, 64, 128);
  ASSERT_EQ(cut.size(), 3u);
  EXPECT_EQ(cut[0].offset, 64);
  EXPECT_EQ(cut[0].numel, 36);
  EXPECT_TRUE(cut[0].decay);
  EXPECT_EQ(cut[1].offset, 100);
  EXPECT_EQ(cut[1].numel, 10);
  EXPECT_FALSE(cut[1].decay);
  EXPECT_EQ(cut[2].offset, 110);
  EXPECT_EQ(cut[2].numel, 18);
  EXPECT_TRUE(clip_ranges(ranges, 200, 300).empty());
}

// The slices a node's ranks update (train/node_shard.h): they tile the slab in rank order, start on the
// norm's chunk boundaries (whole chunk sums per rank; no cache line of the f32 state or of the bf16 copies is
// written by two ranks), are within one chunk of equal, and the decay ranges cut to a slice keep their flags.
#include "train/node_shard.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/error.h"
#include "kernels/grad_norm.h"

using namespace ct::train;

TEST(NodeShard, SlicesTileTheSlabOnNormChunkBoundaries) {
  constexpr int64_t K = ct::kernels::kGradNormChunk;
  for (int64_t n : {int64_t{0}, int64_t{1}, K - 1, K, K + 1, 5 * K + 7, int64_t{108893186}}) {
    for (int ranks : {1, 2, 3, 8}) {
      SCOPED_TRACE(std::to_string(n) + " over " + std::to_string(ranks));
      int64_t prev = 0, smallest = n, largest = 0;
      for (int r = 0; r < ranks; ++r) {
        int64_t lo, hi;
        node_slice(n, r, ranks, lo, hi);
        EXPECT_EQ(lo, prev);
        EXPECT_LE(lo, hi);
        EXPECT_EQ(lo % K, 0);
        prev = hi;
        smallest = std::min(smallest, hi - lo);
        largest = std::max(largest, hi - lo);
      }
      EXPECT_EQ(prev, n);
      if (n >= K * ranks) {
        EXPECT_LE(largest - smallest, K);
      }
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

TEST(NodeShard, ChunkSumsInPiecesAddUpToTheWholeNormBitForBit) {
  constexpr int64_t K = ct::kernels::kGradNormChunk;
  const int64_t n = 7 * K + 123;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> g(static_cast<size_t>(n));
  for (float& x : g) x = normal(rng);
  for (int64_t i = 0; i < n; i += 5) g[static_cast<size_t>(i)] *= 1e3f;  // magnitudes where order shows
  const double whole = ct::kernels::grad_sq_sum(g.data(), n);
  for (int ranks : {2, 3, 5}) {
    std::vector<double> parts(8, -1.0);
    for (int r = 0; r < ranks; ++r) {
      NodeShard s;
      node_slice(n, r, ranks, s.lo, s.hi);
      ct::kernels::grad_sq_chunk_sums(g.data(), n, s.first_chunk(), s.last_chunk(), parts.data());
    }
    EXPECT_EQ(ct::kernels::sum_chunks(parts.data(), 8), whole) << ranks;
  }
}

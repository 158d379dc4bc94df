// Distributed sampler: coverage, torch-style padding, determinism per (seed, epoch), resume skipping, and the
// slice rule that makes N ranks x batch b see the samples of 1 rank x batch N*b at every step.
#include "data/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "test_util.h"

namespace ct::data {
namespace {

SamplerOptions opts(int64_t n, int64_t b, int rank, int world, uint64_t seed = 7, bool shuffle = true) {
  SamplerOptions o;
  o.num_samples = n;
  o.batch_size = b;
  o.rank = rank;
  o.world = world;
  o.seed = seed;
  o.shuffle = shuffle;
  return o;
}

TEST(Sampler, PermutationIsDeterministicAndComplete) {
  auto p = random_permutation(100, 3);
  EXPECT_EQ(p, random_permutation(100, 3));
  EXPECT_NE(p, random_permutation(100, 4));
  auto s = p;
  std::sort(s.begin(), s.end());
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(s[static_cast<size_t>(i)], i);
  EXPECT_TRUE(random_permutation(0, 1).empty());
  EXPECT_EQ(random_permutation(1, 1), std::vector<int64_t>{0});
}

TEST(Sampler, OneRankCoversEverySampleOncePerEpoch) {
  DistributedSampler s(opts(10, 3, 0, 1));
  EXPECT_EQ(s.num_batches(), 4);
  auto b = s.batches(0);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[3].size(), 1u);  // drop_last off: the short last batch stays
  std::multiset<int64_t> seen;
  for (auto& x : b) seen.insert(x.begin(), x.end());
  EXPECT_EQ(seen.size(), 10u);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(seen.count(i), 1u);
  // Epochs reshuffle (seed + epoch); the same epoch repeats exactly.
  EXPECT_EQ(s.batches(0), DistributedSampler(opts(10, 3, 0, 1)).batches(0));
  EXPECT_NE(s.epoch_order(0), s.epoch_order(1));
  EXPECT_EQ(s.epoch_order(1), random_permutation(10, 8));
}

TEST(Sampler, NoShuffleIsInOrder) {
  DistributedSampler s(opts(5, 2, 0, 1, 7, false));
  EXPECT_EQ(s.batches(3), (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}, {4}}));
}

TEST(Sampler, PadsToWorldMultipleByRepeatingTheStart) {
  // n = 10, world = 4: torch pads to 12 with the first two of the epoch's list.
  SamplerOptions o = opts(10, 2, 0, 4, 7, false);
  DistributedSampler s(o);
  EXPECT_EQ(s.num_rank_samples(), 3);
  EXPECT_EQ(s.num_batches(), 2);
  EXPECT_EQ(s.epoch_order(0), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1}));
  // Global batches of 8 then 4; rank r takes slice r of each.
  std::vector<std::vector<std::vector<int64_t>>> per_rank;
  for (int r = 0; r < 4; ++r) {
    o.rank = r;
    per_rank.push_back(DistributedSampler(o).batches(0));
  }
  EXPECT_EQ(per_rank[0], (std::vector<std::vector<int64_t>>{{0, 1}, {8}}));
  EXPECT_EQ(per_rank[1], (std::vector<std::vector<int64_t>>{{2, 3}, {9}}));
  EXPECT_EQ(per_rank[2], (std::vector<std::vector<int64_t>>{{4, 5}, {0}}));
  EXPECT_EQ(per_rank[3], (std::vector<std::vector<int64_t>>{{6, 7}, {1}}));
  // Tiny data sets repeat more than once (padding longer than the list).
  SamplerOptions t = opts(2, 1, 4, 5, 7, false);
  EXPECT_EQ(DistributedSampler(t).epoch_order(0), (std::vector<int64_t>{0, 1, 0, 1, 0}));
  EXPECT_EQ(DistributedSampler(t).batches(0), (std::vector<std::vector<int64_t>>{{0}}));
}

TEST(Sampler, StepCountsMatchTorch) {
  // ceil(ceil(n / world) / b), the run_qa figures for 88,524 features at batch 12.
  const std::map<int, int64_t> expect = {{1, 7377}, {2, 3689}, {4, 1845}, {8, 923}};
  for (auto [world, steps] : expect) {
    EXPECT_EQ(DistributedSampler(opts(88524, 12, 0, world)).num_batches(), steps) << world;
  }
}

TEST(Sampler, NRanksTimesBEqualsOneRankTimesNB) {
  for (int world : {2, 3, 4}) {
    for (int64_t n : {24, 25, 37}) {
      const int64_t b = 2;
      auto one = DistributedSampler(opts(n, world * b, 0, 1)).batches(5);
      std::vector<std::vector<std::vector<int64_t>>> ranks;
      for (int r = 0; r < world; ++r) ranks.push_back(DistributedSampler(opts(n, b, r, world)).batches(5));
      ASSERT_EQ(ranks[0].size(), one.size()) << "world " << world << " n " << n;
      for (size_t s = 0; s < one.size(); ++s) {
        std::vector<int64_t> joined;
        for (int r = 0; r < world; ++r) {
          EXPECT_EQ(ranks[static_cast<size_t>(r)][s].size(), ranks[0][s].size());  // equal share per rank
          joined.insert(joined.end(), ranks[static_cast<size_t>(r)][s].begin(),
                        ranks[static_cast<size_t>(r)][s].end());
        }
        if (s + 1 < one.size() || n % (world * b) == 0) {
          EXPECT_EQ(joined, one[s]) << "world " << world << " n " << n << " step " << s;
        } else {
          // Last step: the one-rank batch, then torch's padding repeats from the epoch's start.
          ASSERT_GE(joined.size(), one[s].size());
          EXPECT_TRUE(std::equal(one[s].begin(), one[s].end(), joined.begin()));
        }
      }
    }
  }
}

TEST(Sampler, SkipFirstBatchesForResume) {
  DistributedSampler s(opts(50, 4, 1, 2));
  auto all = s.batches(2);
  auto rest = s.batches(2, 3);
  ASSERT_EQ(rest.size(), all.size() - 3);
  EXPECT_TRUE(std::equal(rest.begin(), rest.end(), all.begin() + 3));
  EXPECT_TRUE(s.batches(2, s.num_batches()).empty());
  EXPECT_TRUE(s.batches(2, s.num_batches() + 5).empty());
}

TEST(Sampler, DropLast) {
  SamplerOptions o = opts(10, 3, 0, 1);
  o.drop_last = true;
  DistributedSampler s(o);
  EXPECT_EQ(s.num_batches(), 3);
  for (auto& b : s.batches(0)) EXPECT_EQ(b.size(), 3u);
}

TEST(Sampler, EmptyDataSet) {
  DistributedSampler s(opts(0, 4, 0, 2));
  EXPECT_EQ(s.num_batches(), 0);
  EXPECT_TRUE(s.batches(0).empty());
}

TEST(Sampler, BadOptions) {
  using testing::expect_error;
  expect_error([] { DistributedSampler(opts(10, 2, 2, 2)); }, {"rank 2", "world size 2"});
  expect_error([] { DistributedSampler(opts(10, 2, -1, 2)); }, {"rank -1"});
  expect_error([] { DistributedSampler(opts(10, 2, 0, 0)); }, {"world size must be >= 1"});
  expect_error([] { DistributedSampler(opts(10, 0, 0, 1)); }, {"batch size must be >= 1"});
  expect_error([] { DistributedSampler(opts(-1, 2, 0, 1)); }, {"number of samples"});
  expect_error([] { DistributedSampler(opts(10, 2, 0, 1)).batches(0, -1); }, {"cannot skip -1"});
}

}  // namespace
}  // namespace ct::data

// Distributed sampler: coverage, torch-style padding and interleaving, determinism per (seed, epoch), resume
// skipping, and the rule that makes N ranks x batch b see the samples of 1 rank x batch N*b at every step.
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

using Rows = std::vector<std::vector<int64_t>>;

Rows indices(const std::vector<SampledBatch>& bs) {
  Rows out;
  for (const auto& b : bs) out.push_back(b.indices);
  return out;
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
  auto b = indices(s.batches(0));
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[3].size(), 1u);  // drop_last off: the short last batch stays
  std::multiset<int64_t> seen;
  for (auto& x : b) seen.insert(x.begin(), x.end());
  EXPECT_EQ(seen.size(), 10u);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(seen.count(i), 1u);
  // Epochs reshuffle (seed + epoch); the same epoch repeats exactly.
  EXPECT_EQ(b, indices(DistributedSampler(opts(10, 3, 0, 1)).batches(0)));
  EXPECT_NE(s.epoch_order(0), s.epoch_order(1));
  EXPECT_EQ(s.epoch_order(1), random_permutation(10, 8));
}

TEST(Sampler, NoShuffleIsInOrder) {
  DistributedSampler s(opts(5, 2, 0, 1, 7, false));
  EXPECT_EQ(indices(s.batches(3)), (Rows{{0, 1}, {2, 3}, {4}}));
  // Positions in the epoch's list travel with the indices (the dropout key).
  EXPECT_EQ(s.batches(3)[1].positions, (std::vector<int64_t>{2, 3}));
}

TEST(Sampler, PadsToWorldMultipleByRepeatingTheStart) {
  // n = 10, world = 4: torch pads to 12 with the first two of the epoch's list.
  SamplerOptions o = opts(10, 2, 0, 4, 7, false);
  DistributedSampler s(o);
  EXPECT_EQ(s.num_rank_samples(), 3);
  EXPECT_EQ(s.num_batches(), 2);
  EXPECT_EQ(s.epoch_order(0), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1}));
  // torch's layout: rank r takes positions r, r + 4, r + 8; then batches of 2.
  std::vector<Rows> per_rank;
  for (int r = 0; r < 4; ++r) {
    o.rank = r;
    per_rank.push_back(indices(DistributedSampler(o).batches(0)));
  }
  EXPECT_EQ(per_rank[0], (Rows{{0, 4}, {8}}));
  EXPECT_EQ(per_rank[1], (Rows{{1, 5}, {9}}));
  EXPECT_EQ(per_rank[2], (Rows{{2, 6}, {0}}));
  EXPECT_EQ(per_rank[3], (Rows{{3, 7}, {1}}));
  o.rank = 2;
  EXPECT_EQ(DistributedSampler(o).batches(0)[1].positions, (std::vector<int64_t>{10}));
  // Tiny data sets repeat more than once (padding longer than the list).
  SamplerOptions t = opts(2, 1, 4, 5, 7, false);
  EXPECT_EQ(DistributedSampler(t).epoch_order(0), (std::vector<int64_t>{0, 1, 0, 1, 0}));
  EXPECT_EQ(indices(DistributedSampler(t).batches(0)), (Rows{{0}}));
}

TEST(Sampler, StepCountsMatchTorch) {
  // ceil(ceil(n / world) / b), the run_qa figures for 88,524 features at batch 12.
  const std::map<int, int64_t> expect = {{1, 7377}, {2, 3689}, {4, 1845}, {8, 923}};
  for (auto [world, steps] : expect) {
    EXPECT_EQ(DistributedSampler(opts(88524, 12, 0, world)).num_batches(), steps) << world;
  }
}

TEST(Sampler, NRanksTimesBEqualsOneRankTimesNB) {
  // At every step the ranks' positions together are exactly the one-rank run's positions (as a set), each
  // with the same feature; only the last step of a padded epoch adds torch's repeats.
  for (int world : {2, 3, 4}) {
    for (int64_t n : {24, 25, 37}) {
      const int64_t b = 2;
      auto one = DistributedSampler(opts(n, world * b, 0, 1)).batches(5);
      std::vector<std::vector<SampledBatch>> ranks;
      for (int r = 0; r < world; ++r) ranks.push_back(DistributedSampler(opts(n, b, r, world)).batches(5));
      ASSERT_EQ(ranks[0].size(), one.size()) << "world " << world << " n " << n;
      for (size_t s = 0; s < one.size(); ++s) {
        std::map<int64_t, int64_t> joined;  // position -> feature
        for (int r = 0; r < world; ++r) {
          const auto& rb = ranks[static_cast<size_t>(r)][s];
          EXPECT_EQ(rb.indices.size(), ranks[0][s].indices.size());  // equal share per rank
          for (size_t j = 0; j < rb.indices.size(); ++j) {
            EXPECT_EQ(rb.positions[j] % world, r);
            joined[rb.positions[j]] = rb.indices[j];
          }
        }
        std::map<int64_t, int64_t> want;
        for (size_t j = 0; j < one[s].indices.size(); ++j) want[one[s].positions[j]] = one[s].indices[j];
        if (s + 1 < one.size() || n % world == 0) {
          EXPECT_EQ(joined, want) << "world " << world << " n " << n << " step " << s;
        } else {
          // Last step of a padded epoch: the one-rank batch, then repeats from the epoch's start.
          ASSERT_GE(joined.size(), want.size());
          for (auto [pos, f] : want) EXPECT_EQ(joined.at(pos), f);
          for (auto [pos, f] : joined)
            if (pos >= n) {
              EXPECT_EQ(f, one[0].indices[static_cast<size_t>(pos - n)]);
            }
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
  const Rows all_rows = indices(all);
  EXPECT_EQ(indices(rest), Rows(all_rows.begin() + 3, all_rows.end()));
  EXPECT_TRUE(s.batches(2, s.num_batches()).empty());
  EXPECT_TRUE(s.batches(2, s.num_batches() + 5).empty());
}

TEST(Sampler, DropLast) {
  SamplerOptions o = opts(10, 3, 0, 1);
  o.drop_last = true;
  DistributedSampler s(o);
  EXPECT_EQ(s.num_batches(), 3);
  for (auto& b : s.batches(0)) EXPECT_EQ(b.indices.size(), 3u);
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

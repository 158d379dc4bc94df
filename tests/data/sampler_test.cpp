// Distributed sampler: coverage, torch-style padding and interleaving, determinism per (seed, epoch), resume
// skipping, and the rule that makes N ranks x batch b see the samples of 1 rank x batch N*b at every step.
// --group_by_length: transformers' get_length_grouped_indices index for index, accelerate's batch sharding,
// resume, and less padding.
#include "data/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "core/rng.h"
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

// --group_by_length. Expected values below were printed by Debian's /usr/bin/python3 (torch 1.13) running
// transformers' get_length_grouped_indices (trainer_pt_utils.py, copied verbatim) with
// generator = torch.Generator(); generator.manual_seed(seed), and, for the sharded cases, accelerate's
// BatchSamplerShard (data_loader.py, even_batches=True, exec'd from its source) over
// torch.utils.data.BatchSampler(that order, b, drop_last), for process_index 0..world-1.
const std::vector<int64_t> kLengths = {5, 9,  3, 12, 7, 7,  2, 11, 4, 9, 6, 1,
                                       8, 10, 3, 7,  5, 12, 2, 6,  9, 4, 8};

SamplerOptions grouped(int64_t b, int rank, int world, uint64_t seed = 11, bool drop_last = false) {
  SamplerOptions o = opts(static_cast<int64_t>(kLengths.size()), b, rank, world, seed);
  o.lengths = kLengths;
  o.drop_last = drop_last;
  return o;
}

TEST(LengthGrouped, MatchesTransformersIndexForIndex) {
  EXPECT_EQ(length_grouped_indices(kLengths, 2, 11),
            (std::vector<int64_t>{3,  10, 14, 2,  7,  5, 19, 0, 4, 20, 15, 11,
                                  17, 13, 9,  12, 16, 8, 21, 6, 1, 22, 18}));
  EXPECT_EQ(length_grouped_indices(kLengths, 2, 12),
            (std::vector<int64_t>{17, 15, 2, 18, 13, 22, 10, 16, 20, 5,  4, 21,
                                  3,  12, 0, 11, 7,  9,  19, 8,  1,  14, 6}));
  EXPECT_EQ(length_grouped_indices(kLengths, 3, 11),
            (std::vector<int64_t>{3,  14, 2, 7,  10, 0, 5, 15, 19, 4,  20, 11,
                                  17, 13, 9, 12, 16, 8, 1, 21, 6,  22, 18}));
  EXPECT_EQ(length_grouped_indices(kLengths, 1, 5),
            (std::vector<int64_t>{3,  22, 8,  18, 11, 13, 1, 16, 21, 6, 17, 7,
                                  12, 15, 14, 9,  20, 10, 0, 2,  4,  5, 19}));
  // The sampler's epoch e is that function with seed + e, at the group batch size (per-device x
  // accumulation).
  SamplerOptions o = grouped(1, 0, 1, 9);
  o.group_batch_size = 2;
  EXPECT_EQ(DistributedSampler(o).epoch_order(2), length_grouped_indices(kLengths, 2, 11));
  EXPECT_EQ(DistributedSampler(o).batches(2)[0].indices, std::vector<int64_t>{3});
  EXPECT_TRUE(length_grouped_indices({}, 4, 1).empty());
}

TEST(LengthGrouped, MegabatchesSortedLongestFirstPermutationPerEpoch) {
  Generator g(5);
  std::vector<int64_t> len(1000);
  for (auto& l : len) l = 1 + static_cast<int64_t>(g.below(384));
  const int64_t b = 8, mega = 31 * b;  // mega_batch_mult = min(1000 / 32, 50)
  SamplerOptions o = opts(1000, b, 0, 1, 3);
  o.lengths = len;
  DistributedSampler s(o);
  const auto e0 = s.epoch_order(0);
  EXPECT_EQ(e0, DistributedSampler(o).epoch_order(0));  // deterministic per (seed, epoch)
  EXPECT_NE(e0, s.epoch_order(1));                      // reshuffled per epoch
  std::vector<int64_t> sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> all(1000);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(sorted, all);
  EXPECT_EQ(len[static_cast<size_t>(e0[0])], *std::max_element(len.begin(), len.end()));
  for (int64_t start = 0; start < 1000; start += mega) {
    // Descending inside each megabatch; its first element may be the one swapped with the longest.
    for (int64_t k = start + 2; k < std::min<int64_t>(1000, start + mega); ++k)
      EXPECT_GE(len[static_cast<size_t>(e0[static_cast<size_t>(k - 1)])],
                len[static_cast<size_t>(e0[static_cast<size_t>(k)])])
          << "megabatch at " << start << ", position " << k;
  }
  // Ties keep the permutation's order (Python's sorted is stable), so equal lengths group to the permutation.
  const std::vector<int64_t> flat(50, 384);
  EXPECT_EQ(length_grouped_indices(flat, 4, 7), torch_randperm(50, 7));
}

TEST(LengthGrouped, ShardsBatchesLikeAccelerate) {
  struct Case {
    int64_t b;
    int world;
    bool drop_last;
    std::vector<Rows> ranks;
  };
  const std::vector<Case> cases = {
      {2,
       2,
       false,
       {{{3, 10}, {7, 5}, {4, 20}, {17, 13}, {16, 8}, {1, 22}},
        {{14, 2}, {19, 0}, {15, 11}, {9, 12}, {21, 6}, {18, 3}}}},
      {3,
       2,
       false,
       {{{3, 14, 2}, {5, 15, 19}, {17, 13, 9}, {1, 21, 6}},
        {{7, 10, 0}, {4, 20, 11}, {12, 16, 8}, {22, 18, 3}}}},
      {2,
       3,
       false,
       {{{3, 10}, {19, 0}, {17, 13}, {21, 6}},
        {{14, 2}, {4, 20}, {9, 12}, {1, 22}},
        {{7, 5}, {15, 11}, {16, 8}, {18, 3}}}},
      {2,
       2,
       true,
       {{{3, 10}, {7, 5}, {4, 20}, {17, 13}, {16, 8}}, {{14, 2}, {19, 0}, {15, 11}, {9, 12}, {21, 6}}}},
      {4,
       4,
       false,
       {{{3, 10, 14, 2}, {16, 8, 21, 6}},
        {{7, 5, 19, 0}, {1, 22, 18, 3}},
        {{4, 20, 15, 11}, {10, 14, 2, 7}},
        {{17, 13, 9, 12}, {5, 19, 0, 4}}}},
  };
  for (const auto& c : cases) {
    for (int r = 0; r < c.world; ++r) {
      DistributedSampler s(grouped(c.b, r, c.world, 11, c.drop_last));
      const auto got = s.batches(0);
      EXPECT_EQ(indices(got), c.ranks[static_cast<size_t>(r)])
          << "b " << c.b << " world " << c.world << " rank " << r;
      EXPECT_EQ(s.num_batches(), static_cast<int64_t>(c.ranks[0].size()));
      EXPECT_EQ(s.num_rank_samples(), s.num_batches() * c.b);
      // Rank r's batch s is batch s*world + r of the (padded) list: positions are contiguous.
      for (size_t k = 0; k < got.size(); ++k)
        for (size_t j = 0; j < got[k].positions.size(); ++j)
          EXPECT_EQ(got[k].positions[j],
                    (static_cast<int64_t>(k) * c.world + r) * c.b + static_cast<int64_t>(j));
    }
  }
}

TEST(LengthGrouped, OneRankIsAPlainDataLoader) {
  DistributedSampler s(grouped(2, 0, 1));
  EXPECT_EQ(s.num_batches(), 12);
  EXPECT_EQ(s.num_rank_samples(), 23);
  const auto b = indices(s.batches(0));
  EXPECT_EQ(b.back(), std::vector<int64_t>{18});  // short last batch, no padding
  std::vector<int64_t> flat;
  for (const auto& x : b) flat.insert(flat.end(), x.begin(), x.end());
  EXPECT_EQ(flat, length_grouped_indices(kLengths, 2, 11));
  DistributedSampler d(grouped(2, 0, 1, 11, /*drop_last=*/true));
  EXPECT_EQ(d.num_batches(), 11);
  EXPECT_EQ(d.batches(0).back().indices.size(), 2u);
}

TEST(LengthGrouped, StepSetIndependentOfWorldForOneList) {
  // With the same list (same group batch), step s of N ranks x b is positions [s*N*b, (s+1)*N*b): the
  // features of step s of 1 rank x N*b, dropout keys included; only the last step adds accelerate's repeats.
  for (int world : {2, 3, 4}) {
    const int64_t b = 2;
    SamplerOptions one_o = grouped(world * b, 0, 1);
    one_o.group_batch_size = 4;
    const auto one = DistributedSampler(one_o).batches(1);
    std::vector<std::vector<SampledBatch>> ranks;
    for (int r = 0; r < world; ++r) {
      SamplerOptions o = grouped(b, r, world);
      o.group_batch_size = 4;
      ranks.push_back(DistributedSampler(o).batches(1));
    }
    ASSERT_EQ(ranks[0].size(), one.size()) << world;
    for (size_t s = 0; s < one.size(); ++s) {
      std::map<int64_t, int64_t> joined, want;
      for (const auto& rb : ranks)
        for (size_t j = 0; j < rb[s].indices.size(); ++j) joined[rb[s].positions[j]] = rb[s].indices[j];
      for (size_t j = 0; j < one[s].indices.size(); ++j) want[one[s].positions[j]] = one[s].indices[j];
      for (auto [pos, f] : want) EXPECT_EQ(joined.at(pos), f) << "world " << world << " step " << s;
      if (s + 1 < one.size()) {
        EXPECT_EQ(joined, want) << "world " << world << " step " << s;
      }
    }
  }
  // HF groups by per-device batch x accumulation, not x world: 2 x 2 and 1 x 4 build different lists.
  EXPECT_NE(DistributedSampler(grouped(2, 0, 2)).epoch_order(0),
            DistributedSampler(grouped(4, 0, 1)).epoch_order(0));
}

TEST(LengthGrouped, SkipFirstBatchesForResume) {
  for (int world : {1, 2}) {
    for (int r = 0; r < world; ++r) {
      DistributedSampler s(grouped(2, r, world));
      const Rows all = indices(s.batches(3));
      const auto rest = s.batches(3, 4);
      EXPECT_EQ(indices(rest), Rows(all.begin() + 4, all.end()));
      EXPECT_EQ(rest[0].positions, s.batches(3)[4].positions);
      EXPECT_TRUE(s.batches(3, s.num_batches()).empty());
    }
  }
}

// Sum over batches of (longest * rows - tokens): what padding each batch to its longest feature wastes.
int64_t padding_waste(const std::vector<SampledBatch>& batches, const std::vector<int64_t>& len) {
  int64_t waste = 0;
  for (const auto& b : batches) {
    int64_t longest = 0, sum = 0;
    for (int64_t i : b.indices) {
      longest = std::max(longest, len[static_cast<size_t>(i)]);
      sum += len[static_cast<size_t>(i)];
    }
    waste += longest * static_cast<int64_t>(b.indices.size()) - sum;
  }
  return waste;
}

TEST(LengthGrouped, WastesLessPadding) {
  // Skewed like SQuAD features: most short, a tenth near max_seq_length.
  Generator g(1);
  std::vector<int64_t> len(2000);
  for (auto& l : len)
    l = g.below(10) == 0 ? 300 + static_cast<int64_t>(g.below(85)) : 40 + static_cast<int64_t>(g.below(120));
  SamplerOptions o = opts(2000, 16, 0, 1, 42);
  const int64_t plain = padding_waste(DistributedSampler(o).batches(0), len);
  o.lengths = len;
  const int64_t grouped_waste = padding_waste(DistributedSampler(o).batches(0), len);
  EXPECT_LT(grouped_waste * 5, plain) << "grouped " << grouped_waste << " vs " << plain;
}

TEST(LengthGrouped, BadOptions) {
  SamplerOptions o = opts(10, 2, 0, 1);
  o.lengths = {1, 2, 3};
  testing::expect_error([&] { DistributedSampler s(o); }, {"3 lengths for 10 samples"});
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

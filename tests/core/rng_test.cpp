#include "core/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/bf16.h"

namespace ct {

TEST(Philox, KnownAnswerVector) {
  // Random123's published kat_vectors for philox4x32_10 with counter = key = 0.
  auto w = philox4x32(0, 0, 0);
  EXPECT_EQ(w[0], 0x6627e8d5u);
  EXPECT_EQ(w[1], 0xe169c58du);
  EXPECT_EQ(w[2], 0xbc57ac4cu);
  EXPECT_EQ(w[3], 0x9b00dbd8u);
}

TEST(Philox, UniformIsSplitInvariant) {
  std::vector<float> whole(1001), part(1001);
  philox_uniform(7, 3, 5, whole.data(), 1001);
  philox_uniform(7, 3, 5, part.data(), 10);
  philox_uniform(7, 3, 15, part.data() + 10, 991);
  EXPECT_EQ(whole, part);
  double mean = 0;
  for (float v : whole) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
    mean += v;
  }
  EXPECT_NEAR(mean / whole.size(), 0.5, 0.05);
}

TEST(Generator, StateRoundTripResumesSequence) {
  Generator g(123);
  for (int i = 0; i < 17; ++i) g.next_u32();
  Generator h(0);
  h.set_state(g.state());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(g.next_u64(), h.next_u64());
  for (int i = 0; i < 1000; ++i) EXPECT_LT(g.below(7), 7u);
}

// normal() on a block-aligned state computes its Philox block once; it must give, bit for bit, the normal of
// two word-by-word uniforms (weight init depends on it), and leave the state where that path would. Unaligned
// states (a normal after an odd next_u32) take the word-by-word path.
TEST(Generator, NormalEqualsBoxMullerOfTwoUniforms) {
  for (uint64_t start :
       {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{4000}, uint64_t{1} << 40}) {
    Generator g(99), words(99);
    g.set_state({99, start});
    words.set_state({99, start});
    for (int i = 0; i < 2000; ++i) {
      double u1 = words.uniform(), u2 = words.uniform();
      if (u1 < 1e-300) u1 = 1e-300;
      const double want = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      const double got = g.normal();
      ASSERT_EQ(std::memcmp(&got, &want, sizeof(double)), 0) << "start " << start << " draw " << i;
      ASSERT_EQ(g.state().offset, words.state().offset);
    }
  }
}

// Expected values printed by Debian's /usr/bin/python3 with torch 1.13:
//   g = torch.Generator(); g.manual_seed(s); torch.randperm(n, generator=g).tolist()
TEST(TorchRandperm, MatchesTorchValueForValue) {
  EXPECT_EQ(torch_randperm(10, 42), (std::vector<int64_t>{2, 6, 1, 8, 4, 5, 0, 9, 3, 7}));
  const auto p = torch_randperm(1000, 12345);
  EXPECT_EQ(std::vector<int64_t>(p.begin(), p.begin() + 8),
            (std::vector<int64_t>{690, 394, 777, 772, 676, 857, 14, 924}));
  int64_t weighted = 0;  // sum(i * p[i]) over the whole permutation, from the same torch call
  for (size_t i = 0; i < p.size(); ++i) weighted += static_cast<int64_t>(i) * p[i];
  EXPECT_EQ(weighted, 248872991);
  // torch's mt19937 keeps the seed's low 32 bits.
  const auto q = torch_randperm(50, 7);
  EXPECT_EQ(std::vector<int64_t>(q.begin(), q.begin() + 4), (std::vector<int64_t>{15, 7, 27, 19}));
  EXPECT_EQ(torch_randperm(50, (uint64_t{1} << 32) + 7), q);
  EXPECT_TRUE(torch_randperm(0, 1).empty());
  EXPECT_EQ(torch_randperm(1, 1), std::vector<int64_t>{0});
}

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3f80);
  // 1 + 2^-8 is exactly halfway between bf16 1.0 and 1.0078125: ties go to the even mantissa (1.0).
  EXPECT_EQ(f32_to_bf16_bits(1.00390625f), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1.0078125 (odd) and 1.015625 (even).
  EXPECT_EQ(f32_to_bf16_bits(1.01171875f), 0x3f82);
  EXPECT_EQ(bf16_bits_to_f32(0x4040), 3.0f);
  float nan = bf16_bits_to_f32(f32_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_TRUE(std::isnan(nan));
}

}  // namespace ct

#include "core/numpy_rng.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace ct {
namespace {

// tests/core/data/numpy_rng_golden.json: NumPy's own draws (scripts/numpy_rng_golden.py).
nlohmann::json golden() {
  std::ifstream f(std::string(CORETRAIN_TEST_DATA) + "/numpy_rng_golden.json");
  EXPECT_TRUE(f.good());
  return nlohmann::json::parse(f);
}

uint64_t u64(const nlohmann::json& s) {
  return std::stoull(s.get<std::string>());
}

TEST(NumpyRng, RawDrawsAreNumpyDefaultRng) {
  const nlohmann::json g = golden();
  for (const auto& c : g["cases"]) {
    const uint64_t seed = u64(c["seed"]);
    NumpyPcg64 a(seed);
    for (const auto& v : c["u64"]) EXPECT_EQ(a.next_u64(), u64(v)) << "seed " << seed;
    NumpyPcg64 b(seed);
    for (const auto& v : c["u32"]) EXPECT_EQ(b.next_u32(), v.get<uint32_t>()) << "seed " << seed;
  }
}

TEST(NumpyRng, PermutationIsDefaultRngPermutation) {
  const nlohmann::json g = golden();
  int checked = 0;
  for (const auto& c : g["cases"]) {
    const uint64_t seed = u64(c["seed"]);
    for (const auto& [n, want] : c["permutations"].items()) {
      EXPECT_EQ(numpy_permutation(seed, std::stoll(n)), want.get<std::vector<int64_t>>())
          << "seed " << seed << " n " << n;
      ++checked;
    }
    for (const auto& [n, want] : c["large"].items()) {
      const auto p = numpy_permutation(seed, std::stoll(n));
      const auto head = want["head"].get<std::vector<int64_t>>();
      EXPECT_EQ(std::vector<int64_t>(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(head.size())), head)
          << "seed " << seed << " n " << n;
      uint64_t sum = 0;
      for (size_t i = 0; i < p.size(); ++i) sum += static_cast<uint64_t>(i) * static_cast<uint64_t>(p[i]);
      EXPECT_EQ(sum, u64(want["weighted_sum"])) << "seed " << seed << " n " << n;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 8 * 9);
}

TEST(NumpyRng, IntervalStaysInRange) {
  NumpyPcg64 g(7);
  for (uint64_t max : {0ull, 1ull, 5ull, 1000ull, 0xffffffffull, 0x100000000ull, ~0ull})
    for (int i = 0; i < 50; ++i) EXPECT_LE(g.interval(max), max);
}

}  // namespace
}  // namespace ct

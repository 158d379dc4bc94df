#include "kernels/normal_init.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/rng.h"

namespace ct::kernels {

// Weight init must not depend on which path draws it: every value equals the sequential Generator's normal()
// at the same stream position, bit for bit, for lengths that end mid-lane and offsets far into the stream.
TEST(NormalInit, EqualsTheGeneratorBitForBit) {
  for (const uint64_t offset : {uint64_t{0}, uint64_t{4}, uint64_t{4} * 1000003, uint64_t{1} << 42}) {
    for (const int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{1000}}) {
      std::vector<float> got(static_cast<size_t>(n));
      normal_init(got.data(), n, 1234, offset, 0.02f);
      Generator g(1234);
      g.set_state({1234, offset});
      for (int64_t i = 0; i < n; ++i) {
        const float want = static_cast<float>(g.normal()) * 0.02f;
        ASSERT_EQ(std::memcmp(&got[i], &want, sizeof(float)), 0) << "offset " << offset << " value " << i;
      }
    }
  }
}

TEST(NormalInit, RefusesAnOffsetInsideABlock) {
  float v = 0;
  EXPECT_THROW(normal_init(&v, 1, 1, 2, 1.0f), Error);
}

}  // namespace ct::kernels

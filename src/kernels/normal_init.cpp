#include "kernels/normal_init.h"

#include "core/error.h"
#include "kernels/philox_lanes.h"

namespace ct::kernels {

void normal_init(float* out, int64_t n, uint64_t seed, uint64_t word_offset, float stdev) {
  CT_CHECK(word_offset % 4 == 0, "normal_init: word offset ", word_offset, " is not a whole Philox block");
  alignas(64) uint32_t words[4 * kPhiloxLanes];
  const uint64_t first = word_offset / 4;
  for (int64_t i = 0; i < n; i += kPhiloxLanes) {
    // Generator::next_u32's stream is ~0; value i is the normal of block first + i.
    philox_16_blocks(seed, ~uint64_t{0}, first + static_cast<uint64_t>(i), words);
    const int64_t m = n - i < kPhiloxLanes ? n - i : kPhiloxLanes;
    for (int64_t j = 0; j < m; ++j)
      out[i + j] =
          static_cast<float>(normal_from_block(words[j], words[kPhiloxLanes + j], words[2 * kPhiloxLanes + j],
                                               words[3 * kPhiloxLanes + j])) *
          stdev;
  }
}

}  // namespace ct::kernels

#include "kernels/normal_init.h"

#include <cmath>

#include "core/error.h"
#include "kernels/philox_lanes.h"

namespace ct::kernels {

void normal_init(float* out, int64_t n, uint64_t seed, uint64_t word_offset, float stdev) {
  CT_CHECK(word_offset % 4 == 0, "normal_init: word offset ", word_offset, " is not a whole Philox block");
  constexpr double kUnit = 1.0 / 9007199254740992.0;
  alignas(64) uint32_t words[4 * kPhiloxLanes];
  const uint64_t first = word_offset / 4;
  for (int64_t i = 0; i < n; i += kPhiloxLanes) {
    // Generator::next_u32's stream is ~0; normal() reads words 0-1 and 2-3 of its block as two 53-bit
    // uniforms.
    philox_16_blocks(seed, ~uint64_t{0}, first + static_cast<uint64_t>(i), words);
    const int64_t m = n - i < kPhiloxLanes ? n - i : kPhiloxLanes;
    for (int64_t j = 0; j < m; ++j) {
      const uint64_t hi = (uint64_t{words[j]} << 32) | words[kPhiloxLanes + j];
      const uint64_t lo = (uint64_t{words[2 * kPhiloxLanes + j]} << 32) | words[3 * kPhiloxLanes + j];
      double u1 = static_cast<double>(hi >> 11) * kUnit;
      const double u2 = static_cast<double>(lo >> 11) * kUnit;
      if (u1 < 1e-300) u1 = 1e-300;
      out[i + j] =
          static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2)) * stdev;
    }
  }
}

}  // namespace ct::kernels

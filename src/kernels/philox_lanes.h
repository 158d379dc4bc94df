// Philox4x32-10 over 16 consecutive counters at once, written lane-wise so gcc vectorizes the 32x32->64
// multiplies; the words equal ct::philox4x32 (core/rng.h) word for word.
#pragma once

#include <cstdint>

#include "core/rng.h"

namespace ct::kernels {

constexpr int kPhiloxLanes = 16;

// out[16 * w + j] = word w of block (first_block + j), j in [0, 16): word-major, so each word's 16 lanes are
// contiguous.
inline void philox_16_blocks(uint64_t seed, uint64_t stream, uint64_t first_block, uint32_t* out) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0[kPhiloxLanes], c1[kPhiloxLanes], c2[kPhiloxLanes], c3[kPhiloxLanes];
#pragma omp simd
  for (int j = 0; j < kPhiloxLanes; ++j) {
    const uint64_t lo = first_block + j;
    c0[j] = static_cast<uint32_t>(lo);
    c1[j] = static_cast<uint32_t>(lo >> 32);
    c2[j] = static_cast<uint32_t>(stream);
    c3[j] = static_cast<uint32_t>(stream >> 32);
  }
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
#pragma omp simd
    for (int j = 0; j < kPhiloxLanes; ++j) {
      const uint64_t p0 = static_cast<uint64_t>(kM0) * c0[j];
      const uint64_t p1 = static_cast<uint64_t>(kM1) * c2[j];
      const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1[j] ^ k0;
      const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3[j] ^ k1;
      c1[j] = static_cast<uint32_t>(p1);
      c3[j] = static_cast<uint32_t>(p0);
      c0[j] = n0;
      c2[j] = n2;
    }
    k0 += kW0;
    k1 += kW1;
  }
#pragma omp simd
  for (int j = 0; j < kPhiloxLanes; ++j) {
    out[j] = c0[j];
    out[kPhiloxLanes + j] = c1[j];
    out[2 * kPhiloxLanes + j] = c2[j];
    out[3 * kPhiloxLanes + j] = c3[j];
  }
}

// The dropout mask: counters are grouped in aligned runs of 64; within run g (counter c = 64 g + 16 w + j)
// the value is word w of block 16 g + j, so a run is 16 Philox blocks whose words land contiguously
// (lane-friendly, no interleaving). keep iff u32_to_unit_float(word) >= p.
inline uint32_t dropout_word(uint64_t seed, uint64_t stream, uint64_t counter) {
  const uint64_t g = counter / 64, w = (counter % 64) / 16, j = counter % 16;
  return philox4x32(seed, stream, g * 16 + j)[w];
}

// Calls fn(i, keep_scale) for every element i in [begin, end) of a dropout site, in order, where keep_scale
// is 1/(1-p) when element i is kept and 0 when dropped. Element i uses counter offset + i.
template <class Fn>
inline void for_each_dropout(uint64_t seed, uint64_t stream, uint64_t offset, float p, int64_t begin,
                             int64_t end, Fn&& fn) {
  constexpr int64_t kRun = 4 * kPhiloxLanes;
  const float scale = 1.0f / (1.0f - p);
  alignas(64) uint32_t words[kRun];
  alignas(64) float keep[kRun];
  int64_t i = begin;
  while (i < end) {
    const uint64_t counter = offset + static_cast<uint64_t>(i);
    const uint64_t run = counter / kRun;
    const int64_t first = static_cast<int64_t>(counter % kRun);
    philox_16_blocks(seed, stream, run * kPhiloxLanes, words);
#pragma omp simd
    for (int64_t k = 0; k < kRun; ++k) keep[k] = u32_to_unit_float(words[k]) >= p ? scale : 0.0f;
    const int64_t n = end - i < kRun - first ? end - i : kRun - first;
    const int64_t base = i - first;
#pragma omp simd
    for (int64_t k = first; k < first + n; ++k) fn(base + k, keep[k]);
    i += n;
  }
}

}  // namespace ct::kernels

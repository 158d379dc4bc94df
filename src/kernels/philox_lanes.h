// Philox4x32-10 over 16 consecutive counters at once, written lane-wise so gcc vectorizes the 32x32->64
// multiplies; the words equal ct::philox4x32 (core/rng.h) word for word, so element i of a dropout site is
// philox4x32(seed, stream, i / 4)[i % 4] as philox_uniform defines it.
#pragma once

#include <cstdint>

#include "core/rng.h"

namespace ct::kernels {

constexpr int kPhiloxLanes = 16;

// out[4 * j + w] = word w of block (first_block + j), j in [0, 16).
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
  for (int j = 0; j < kPhiloxLanes; ++j) {
    out[4 * j] = c0[j];
    out[4 * j + 1] = c1[j];
    out[4 * j + 2] = c2[j];
    out[4 * j + 3] = c3[j];
  }
}

// Calls fn(i, keep_scale) for every element i in [begin, end) of a dropout site, where keep_scale is
// 1/(1-p) when element i is kept and 0 when dropped. Counter of element i is offset + i.
template <class Fn>
inline void for_each_dropout(uint64_t seed, uint64_t stream, uint64_t offset, float p, int64_t begin,
                             int64_t end, Fn&& fn) {
  constexpr int64_t kChunk = 4 * kPhiloxLanes;
  const float scale = 1.0f / (1.0f - p);
  uint32_t words[kChunk];
  int64_t i = begin;
  while (i < end) {
    const uint64_t counter = offset + static_cast<uint64_t>(i);
    const uint64_t block = counter / 4;
    const int64_t first_word = static_cast<int64_t>(counter % 4);
    philox_16_blocks(seed, stream, block, words);
    const int64_t n = end - i < kChunk - first_word ? end - i : kChunk - first_word;
    for (int64_t w = 0; w < n; ++w) fn(i + w, u32_to_unit_float(words[first_word + w]) >= p ? scale : 0.0f);
    i += n;
  }
}

}  // namespace ct::kernels

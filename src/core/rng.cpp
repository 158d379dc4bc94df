#include "core/rng.h"

#include <cmath>
#include <numeric>
#include <random>

#include "core/error.h"

namespace ct {

std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counter_hi, uint64_t counter_lo) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = static_cast<uint32_t>(counter_lo), c1 = static_cast<uint32_t>(counter_lo >> 32);
  uint32_t c2 = static_cast<uint32_t>(counter_hi), c3 = static_cast<uint32_t>(counter_hi >> 32);
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kM0) * c0;
    uint64_t p1 = static_cast<uint64_t>(kM1) * c2;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += kW0;
    k1 += kW1;
  }
  return {c0, c1, c2, c3};
}

void philox_uniform(uint64_t seed, uint64_t stream, uint64_t offset, float* out, int64_t n) {
  if (n <= 0) return;
  // Value i lives in block (i / 4), word (i % 4): any split of [offset, offset + n) yields the same numbers.
  const uint64_t first_block = offset / 4, last_block = (offset + n - 1) / 4;
  const int64_t nblocks = static_cast<int64_t>(last_block - first_block + 1);
#pragma omp parallel for schedule(static) if (n > (1 << 15))
  for (int64_t b = 0; b < nblocks; ++b) {
    const uint64_t block = first_block + b;
    auto words = philox4x32(seed, stream, block);
    for (int w = 0; w < 4; ++w) {
      const uint64_t i = block * 4 + w;
      if (i < offset || i >= offset + static_cast<uint64_t>(n)) continue;
      out[i - offset] = u32_to_unit_float(words[w]);
    }
  }
}

uint32_t Generator::next_u32() {
  // Stream ~0 keeps the sequential generator apart from every philox_uniform stream callers pick.
  auto words = philox4x32(state_.seed, ~uint64_t{0}, state_.offset / 4);
  uint32_t v = words[state_.offset % 4];
  ++state_.offset;
  return v;
}

uint64_t Generator::next_u64() {
  uint64_t hi = next_u32();
  return (hi << 32) | next_u32();
}

double Generator::uniform() {
  return static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0);
}

namespace {

constexpr double kUnit53 = 1.0 / 9007199254740992.0;

double box_muller(double u1, double u2) {
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace

double normal_from_block(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3) {
  return box_muller(static_cast<double>(((uint64_t{w0} << 32) | w1) >> 11) * kUnit53,
                    static_cast<double>(((uint64_t{w2} << 32) | w3) >> 11) * kUnit53);
}

double Generator::normal() {
  if (state_.offset % 4 == 0) {
    // The four words are one Philox block: compute it once instead of once per word (init draws ~10^8 of
    // these; the values are the word-by-word path's exactly).
    const auto w = philox4x32(state_.seed, ~uint64_t{0}, state_.offset / 4);
    state_.offset += 4;
    return normal_from_block(w[0], w[1], w[2], w[3]);
  }
  const double u1 = uniform();
  return box_muller(u1, uniform());
}

uint64_t Generator::below(uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t v;
  do v = next_u64();
  while (v >= limit);
  return v % n;
}

std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed) {
  // Beyond this torch switches to a 64-bit draw and another shuffle, which nothing here needs yet.
  CT_CHECK(n >= 0 && n < int64_t{0xFFFFFFFF} / 20, "torch_randperm: n = ", n, " is outside [0, 2^32 / 20)");
  std::vector<int64_t> r(static_cast<size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  // std::mt19937 is specified to the bit (its 10000th output is fixed by the standard), as torch's is.
  std::mt19937 mt(static_cast<uint32_t>(seed));
  for (int64_t i = 0; i + 1 < n; ++i) {
    // The modulo's bias is torch's too.
    const int64_t z = static_cast<int64_t>(mt() % static_cast<uint64_t>(n - i));
    std::swap(r[static_cast<size_t>(i)], r[static_cast<size_t>(i + z)]);
  }
  return r;
}

}  // namespace ct

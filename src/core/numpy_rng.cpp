#include "core/numpy_rng.h"

#include <array>
#include <cstddef>
#include <utility>

namespace ct {

namespace {

using u128 = unsigned __int128;

// numpy/random/bit_generator.pyx: SeedSequence's hash constants (pool of 4 words, 32-bit arithmetic).
constexpr uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875, kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
constexpr uint32_t kMixMultL = 0xca01f9dd, kMixMultR = 0x4973f715;
constexpr int kPoolSize = 4;

uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> 16;
  return value;
}

uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t r = kMixMultL * x - kMixMultR * y;
  r ^= r >> 16;
  return r;
}

// SeedSequence(seed).generate_state(4, np.uint64).
std::array<uint64_t, 4> seed_sequence_state(uint64_t seed) {
  // The entropy as 32-bit words, least significant first (0 is one word).
  std::vector<uint32_t> entropy;
  for (uint64_t v = seed; entropy.empty() || v > 0; v >>= 32) entropy.push_back(static_cast<uint32_t>(v));
  std::array<uint32_t, kPoolSize> pool{};
  uint32_t hash_const = kInitA;
  for (int i = 0; i < kPoolSize; ++i)
    pool[i] = hashmix(static_cast<std::size_t>(i) < entropy.size() ? entropy[static_cast<std::size_t>(i)] : 0,
                      hash_const);
  for (int src = 0; src < kPoolSize; ++src)
    for (int dst = 0; dst < kPoolSize; ++dst)
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], hash_const));
  for (std::size_t src = kPoolSize; src < entropy.size(); ++src)
    for (int dst = 0; dst < kPoolSize; ++dst) pool[dst] = mix(pool[dst], hashmix(entropy[src], hash_const));
  // generate_state: 8 words cycling over the pool, read as little-endian pairs.
  std::array<uint64_t, 4> out{};
  uint32_t hash_b = kInitB;
  for (int i = 0; i < 8; ++i) {
    uint32_t v = pool[i % kPoolSize];
    v ^= hash_b;
    hash_b *= kMultB;
    v *= hash_b;
    v ^= v >> 16;
    out[i / 2] |= static_cast<uint64_t>(v) << (32 * (i % 2));
  }
  return out;
}

constexpr u128 kMultiplier = (static_cast<u128>(2549297995355413924ULL) << 64) | 4865540595714422341ULL;

}  // namespace

NumpyPcg64::NumpyPcg64(uint64_t seed) {
  // pcg64_set_seed: state and increment from (val[0] << 64 | val[1]) and (val[2] << 64 | val[3]), then
  // pcg_setseq_128_srandom_r.
  const auto val = seed_sequence_state(seed);
  const u128 init_state = (static_cast<u128>(val[0]) << 64) | val[1];
  const u128 init_seq = (static_cast<u128>(val[2]) << 64) | val[3];
  state_ = 0;
  inc_ = (init_seq << 1) | 1;
  state_ = state_ * kMultiplier + inc_;
  state_ += init_state;
  state_ = state_ * kMultiplier + inc_;
}

uint64_t NumpyPcg64::next_u64() {
  state_ = state_ * kMultiplier + inc_;
  const uint64_t x = static_cast<uint64_t>(state_ >> 64) ^ static_cast<uint64_t>(state_);
  const unsigned rot = static_cast<unsigned>(state_ >> 122);
  return (x >> rot) | (x << ((64 - rot) & 63));
}

uint32_t NumpyPcg64::next_u32() {
  if (has_u32_) {
    has_u32_ = false;
    return u32_;
  }
  const uint64_t next = next_u64();
  has_u32_ = true;
  u32_ = static_cast<uint32_t>(next >> 32);
  return static_cast<uint32_t>(next);
}

uint64_t NumpyPcg64::interval(uint64_t max) {
  if (max == 0) return 0;
  uint64_t mask = max;
  for (int s = 1; s <= 32; s *= 2) mask |= mask >> s;  // the smallest all-ones mask >= max
  uint64_t v;
  if (max <= 0xffffffffULL) {
    do v = next_u32() & mask;
    while (v > max);
  } else {
    do v = next_u64() & mask;
    while (v > max);
  }
  return v;
}

std::vector<int64_t> numpy_permutation(uint64_t seed, int64_t n) {
  std::vector<int64_t> perm(static_cast<std::size_t>(n > 0 ? n : 0));
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  NumpyPcg64 gen(seed);
  // Generator.shuffle's _shuffle_raw: i from n-1 down to 1, j = random_interval(i).
  for (int64_t i = n - 1; i >= 1; --i)
    std::swap(perm[static_cast<std::size_t>(i)], perm[gen.interval(static_cast<uint64_t>(i))]);
  return perm;
}

}  // namespace ct

// Counter-based random numbers (Philox4x32-10). A value depends only on (seed, stream, index), never on
// thread count or call order, so dropout masks are reproducible per rank/step/site and a run resumes
// bit-exactly from a saved (seed, offset) pair.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace ct {

// One Philox block: four 32-bit words for key `key` and 128-bit counter (hi, lo).
std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counter_hi, uint64_t counter_lo);

// Uniform float in [0, 1) from 24 random bits.
inline float u32_to_unit_float(uint32_t x) {
  return static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
}

// out[k] = uniform value number (offset + k) of stream `stream` under `seed`; parallel, thread-count
// invariant.
void philox_uniform(uint64_t seed, uint64_t stream, uint64_t offset, float* out, int64_t n);

// The standard normal Generator::normal() draws from one Philox block's four words (Box-Muller on the 53-bit
// uniforms of words 0-1 and 2-3): bulk init (kernels/normal_init) and the Generator share it, so both give
// the same values bit for bit.
double normal_from_block(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3);

// Sequential generator for initialization, shuffling and sampling. Its whole state is (seed, offset), so
// checkpoints save two integers.
class Generator {
 public:
  struct State {
    uint64_t seed = 0;
    uint64_t offset = 0;  // 32-bit words consumed
  };

  explicit Generator(uint64_t seed = 42) : state_{seed, 0} {}

  uint32_t next_u32();
  uint64_t next_u64();
  // Uniform in [0, 1).
  double uniform();
  // Standard normal (Box-Muller on two uniforms).
  double normal();
  // Uniform integer in [0, n), n > 0, without modulo bias.
  uint64_t below(uint64_t n);

  State state() const { return state_; }
  void set_state(State s) { state_ = s; }

 private:
  State state_;
};

// torch.randperm(n, generator=torch.Generator().manual_seed(seed)) on CPU, value for value (checked against
// torch 1.13; 2.x keeps this path for n < 2^32 / 20): torch's CPU generator is a 32-bit mt19937 seeded with
// the seed's low 32 bits, and randperm swaps r[i] with r[i + mt() % (n - i)]. The --group_by_length order
// (data/sampler.h) permutes with it, so that it is transformers' for a generator of the same seed. Throws
// ct::Error for larger n.
std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed);

}  // namespace ct

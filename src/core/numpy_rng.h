// NumPy's default generator, bit for bit: np.random.default_rng(seed) is PCG64 (XSL-RR 128/64) seeded from
// SeedSequence(seed), and Generator.permutation(n) shuffles arange(n) by Fisher-Yates with bounded draws
// (random_interval: mask-and-reject on 32-bit draws below 2^32). `datasets`' Dataset.shuffle(seed=s) selects
// rows in the order np.random.default_rng(s).permutation(len(dataset)) gives, so a command that shuffles
// as run_classification does (--shuffle_train_dataset --shuffle_seed) sees HF's order.
#pragma once

#include <cstdint>
#include <vector>

namespace ct {

class NumpyPcg64 {
 public:
  // np.random.default_rng(seed) for a non-negative integer seed.
  explicit NumpyPcg64(uint64_t seed);

  uint64_t next_u64();
  // PCG64's next_uint32: the low half of a 64-bit draw, then its high half.
  uint32_t next_u32();
  // A uniform integer in [0, max] as NumPy's random_interval draws it.
  uint64_t interval(uint64_t max);

 private:
  unsigned __int128 state_ = 0;
  unsigned __int128 inc_ = 0;
  bool has_u32_ = false;
  uint32_t u32_ = 0;
};

// np.random.default_rng(seed).permutation(n).
std::vector<int64_t> numpy_permutation(uint64_t seed, int64_t n);

}  // namespace ct

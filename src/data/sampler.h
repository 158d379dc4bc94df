// Which samples each rank trains on, per epoch and step: torch's DistributedSampler exactly (one seeded
// permutation per epoch, the same on every rank and for every world size; padded to a multiple of world by
// repeating from its start; rank r takes positions r, r + world, r + 2*world, ...), then per-device batches.
//
// Consequence: step s of N ranks x batch b covers positions [s*N*b, (s+1)*N*b) of the epoch's list, the same
// set as step s of 1 rank x batch N*b (rank r holds the positions = r mod N). So N x b and 1 x N*b train on
// the same features per step; with dropout keyed by position (SampledBatch::positions) they follow one
// trajectory. The only difference is in a last, short batch when the world size pads the list. Steps per
// epoch equal torch's: ceil(ceil(n/world)/b).
#pragma once

#include <cstdint>
#include <vector>

namespace ct::data {

struct SamplerOptions {
  int64_t num_samples = 0;
  int64_t batch_size = 1;  // per rank
  int rank = 0;
  int world = 1;
  uint64_t seed = 42;
  bool shuffle = true;
  bool drop_last = false;  // drop a last batch smaller than batch_size (the same step on every rank)
};

// One per-device batch: feature indices and each one's position in the epoch's padded list (the key that
// makes dropout independent of the world size).
struct SampledBatch {
  std::vector<int64_t> indices;
  std::vector<int64_t> positions;
};

class DistributedSampler {
 public:
  // Throws ct::Error on a bad rank/world/batch size.
  explicit DistributedSampler(SamplerOptions options);

  const SamplerOptions& options() const { return options_; }
  // Batches per epoch, the same on every rank.
  int64_t num_batches() const;
  // Samples this rank sees per epoch (torch's len(sampler) when drop_last is off: ceil(n / world)).
  int64_t num_rank_samples() const;
  // The epoch's padded global list, shared by all ranks.
  std::vector<int64_t> epoch_order(int64_t epoch) const;
  // This rank's batches for `epoch`, skipping the first `skip_batches` (resume mid-epoch).
  std::vector<SampledBatch> batches(int64_t epoch, int64_t skip_batches = 0) const;

 private:
  SamplerOptions options_;
};

// Seeded Fisher-Yates permutation of [0, n) with ct::Generator(seed).
std::vector<int64_t> random_permutation(int64_t n, uint64_t seed);

}  // namespace ct::data

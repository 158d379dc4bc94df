// Which samples each rank trains on, per epoch and step: torch's DistributedSampler semantics (one seeded
// permutation per epoch, the same on every rank; padded by repeating from its start to a multiple of world;
// no drop_last) with one deliberate difference in how ranks share it, so that N ranks x batch b see exactly
// the samples 1 rank x batch N*b sees:
//
//   The epoch's list (permutation of [0, n), seed + epoch, then padded to a multiple of world) is cut into
//   global batches of world * b. Within each global batch of size g (g = world*b, or what is left at the end,
//   always a multiple of world), rank r takes positions [r*g/world, (r+1)*g/world).
//
// So step s of rank r is the r-th slice of step s of the one-rank run with batch world*b (for every full
// batch; the last batch of a multi-rank run also holds the padding repeats). torch interleaves (rank r takes
// every world-th sample), which keeps per-rank sets but not per-step sets. Steps per epoch equal torch's:
// ceil(ceil(n/world)/b) = ceil(n/(world*b)).
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
  std::vector<std::vector<int64_t>> batches(int64_t epoch, int64_t skip_batches = 0) const;

 private:
  SamplerOptions options_;
};

// Seeded Fisher-Yates permutation of [0, n) with ct::Generator(seed).
std::vector<int64_t> random_permutation(int64_t n, uint64_t seed);

}  // namespace ct::data

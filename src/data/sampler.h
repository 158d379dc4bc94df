// Which samples each rank trains on, per epoch and step: torch's DistributedSampler exactly (one seeded
// permutation per epoch, the same on every rank and for every world size; padded to a multiple of world by
// repeating from its start; rank r takes positions r, r + world, r + 2*world, ...), then per-device batches.
//
// Consequence: step s of N ranks x batch b covers positions [s*N*b, (s+1)*N*b) of the epoch's list, the same
// set as step s of 1 rank x batch N*b (rank r holds the positions = r mod N). So N x b and 1 x N*b train on
// the same features per step; with dropout keyed by position (SampledBatch::positions) they follow one
// trajectory. The only difference is in a last, short batch when the world size pads the list. Steps per
// epoch equal torch's: ceil(ceil(n/world)/b).
//
// --group_by_length (SamplerOptions::lengths) follows HF instead: Trainer._get_train_sampler builds
// transformers' LengthGroupedSampler(per_device_train_batch_size x gradient_accumulation_steps), whose order
// is get_length_grouped_indices (length_grouped_indices below), and with several processes accelerate's
// prepare_data_loader shards it by whole batches (BatchSamplerShard, even_batches): the list is cut into
// per-device batches of b consecutive samples and rank r takes batches r, r + N, r + 2N, ... (a contiguous
// run of similar lengths each), the last round filled from the list's start. Step s of N ranks therefore
// still covers positions [s*N*b, (s+1)*N*b), but the list itself depends on the per-device batch: its
// megabatches are min(n / (4*b*accum), 50) * b*accum long, and the world size is not in that product, so
// N x b and 1 x N*b group different samples into a step (HF's behaviour, kept). Its permutation is
// torch.randperm with a generator seeded seed + epoch: HF draws it from torch's global generator, whose
// state by then depends on model init and every earlier epoch's dropout, so no seed reproduces HF's run;
// seed + epoch is the convention of torch's DistributedSampler and transformers'
// DistributedLengthGroupedSampler.
// The lengths are the features' unpadded token counts (the trainer's choice); HF measures len(input_ids),
// which with --pad_to_max_length true (run_qa's default) is max_seq_length for every feature, so there HF's
// grouping changes nothing (stable sort of equal lengths: the plain permutation) while coretrain's groups.
#pragma once

#include <cstdint>
#include <span>
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
  // --group_by_length: every sample's length (empty: no grouping) and the batch size HF's
  // LengthGroupedSampler is given (per-device batch x gradient accumulation; 0: batch_size).
  std::vector<int64_t> lengths;
  int64_t group_batch_size = 0;
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
  bool grouped() const { return !options_.lengths.empty(); }
  // Batches per epoch, the same on every rank.
  int64_t num_batches() const;
  // Samples this rank sees per epoch (torch's len(sampler) when drop_last is off: ceil(n / world); grouped,
  // num_batches() * batch_size, all full, except for one rank's short last batch).
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

// transformers' get_length_grouped_indices(lengths, batch_size,
// generator=torch.Generator().manual_seed(seed)) (trainer_pt_utils.py), index for index: torch.randperm;
// megabatches of mega_batch_mult * batch_size with mega_batch_mult = min(n // (4 * batch_size), 50), at least
// 1; each sorted by length, longest first (stable, as Python's sorted(reverse=True)); the longest sample of
// all swapped into position 0 (first maximum).
std::vector<int64_t> length_grouped_indices(std::span<const int64_t> lengths, int64_t batch_size,
                                            uint64_t seed);

}  // namespace ct::data

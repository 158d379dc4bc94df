#include "data/sampler.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/rng.h"

namespace ct::data {

std::vector<int64_t> random_permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> p(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::iota(p.begin(), p.end(), 0);
  Generator g(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(g.below(static_cast<uint64_t>(i + 1)));
    std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(j)]);
  }
  return p;
}

std::vector<int64_t> length_grouped_indices(std::span<const int64_t> lengths, int64_t batch_size,
                                            uint64_t seed) {
  CT_CHECK(batch_size >= 1, "length_grouped_indices: batch size must be >= 1, got ", batch_size);
  const int64_t n = static_cast<int64_t>(lengths.size());
  std::vector<int64_t> order = torch_randperm(n, seed);
  if (n == 0) return order;  // HF's argmax of no megabatches would raise; an empty epoch is simpler
  const int64_t mega = std::max<int64_t>(std::min<int64_t>(n / (batch_size * 4), 50), 1) * batch_size;
  auto longer = [&](int64_t a, int64_t b) {
    return lengths[static_cast<size_t>(a)] > lengths[static_cast<size_t>(b)];
  };
  size_t longest_start = 0;
  for (int64_t start = 0; start < n; start += mega) {
    const auto first = order.begin() + start, last = order.begin() + std::min(n, start + mega);
    std::stable_sort(first, last, longer);
    if (longer(*first, order[longest_start])) longest_start = static_cast<size_t>(start);
  }
  std::swap(order[0], order[longest_start]);
  return order;
}

DistributedSampler::DistributedSampler(SamplerOptions options) : options_(options) {
  CT_CHECK(options_.world >= 1, "sampler: world size must be >= 1, got ", options_.world);
  CT_CHECK(options_.rank >= 0 && options_.rank < options_.world, "sampler: rank ", options_.rank,
           " out of range for world size ", options_.world);
  CT_CHECK(options_.batch_size >= 1, "sampler: batch size must be >= 1, got ", options_.batch_size);
  CT_CHECK(options_.num_samples >= 0, "sampler: number of samples must be >= 0, got ", options_.num_samples);
  CT_CHECK(options_.lengths.empty() || static_cast<int64_t>(options_.lengths.size()) == options_.num_samples,
           "sampler: ", options_.lengths.size(), " lengths for ", options_.num_samples, " samples");
  CT_CHECK(options_.group_batch_size >= 0, "sampler: group batch size must be >= 0, got ",
           options_.group_batch_size);
}

int64_t DistributedSampler::num_rank_samples() const {
  const int64_t w = options_.world;
  if (grouped()) {
    // One process is a plain DataLoader (short last batch); more get full batches only (accelerate).
    if (w == 1 && !options_.drop_last) return options_.num_samples;
    return num_batches() * options_.batch_size;
  }
  return (options_.num_samples + w - 1) / w;
}

int64_t DistributedSampler::num_batches() const {
  const int64_t b = options_.batch_size;
  if (grouped()) {
    // len(BatchSamplerShard): the DataLoader's batches dealt in rounds of `world`.
    const int64_t n = options_.num_samples, w = options_.world;
    return options_.drop_last ? n / b / w : ((n + b - 1) / b + w - 1) / w;
  }
  const int64_t per_rank = num_rank_samples();
  return options_.drop_last ? per_rank / b : (per_rank + b - 1) / b;
}

std::vector<int64_t> DistributedSampler::epoch_order(int64_t epoch) const {
  const int64_t n = options_.num_samples;
  std::vector<int64_t> order;
  if (grouped()) {
    const int64_t gb = options_.group_batch_size > 0 ? options_.group_batch_size : options_.batch_size;
    order = length_grouped_indices(options_.lengths, gb, options_.seed + static_cast<uint64_t>(epoch));
    // accelerate fills the last round of batches from the list's start (cyclically for a tiny set).
    const int64_t total = options_.world > 1 ? num_batches() * options_.batch_size * options_.world : n;
    for (int64_t k = n; k < total; ++k) order.push_back(order[static_cast<size_t>((k - n) % n)]);
    return order;
  }
  if (options_.shuffle) {
    order = random_permutation(n, options_.seed + static_cast<uint64_t>(epoch));
  } else {
    order.resize(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
  }
  const int64_t total = num_rank_samples() * options_.world;
  for (int64_t k = n; k < total; ++k) order.push_back(order[static_cast<size_t>((k - n) % n)]);
  return order;
}

std::vector<SampledBatch> DistributedSampler::batches(int64_t epoch, int64_t skip_batches) const {
  CT_CHECK(skip_batches >= 0, "sampler: cannot skip ", skip_batches, " batches");
  const std::vector<int64_t> order = epoch_order(epoch);
  const int64_t w = options_.world, b = options_.batch_size, per_rank = num_rank_samples();
  std::vector<SampledBatch> out;
  for (int64_t s = skip_batches; s < num_batches(); ++s) {
    SampledBatch sb;
    if (grouped()) {
      // Batch s*w + r of the list: b consecutive samples of similar length.
      const int64_t start = (s * w + options_.rank) * b;
      const int64_t end = std::min<int64_t>(start + b, static_cast<int64_t>(order.size()));
      for (int64_t pos = start; pos < end; ++pos) {
        sb.positions.push_back(pos);
        sb.indices.push_back(order[static_cast<size_t>(pos)]);
      }
      out.push_back(std::move(sb));
      continue;
    }
    for (int64_t k = s * b; k < std::min(per_rank, (s + 1) * b); ++k) {
      const int64_t pos = k * w + options_.rank;
      sb.positions.push_back(pos);
      sb.indices.push_back(order[static_cast<size_t>(pos)]);
    }
    out.push_back(std::move(sb));
  }
  return out;
}

}  // namespace ct::data

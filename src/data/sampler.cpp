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

DistributedSampler::DistributedSampler(SamplerOptions options) : options_(options) {
  CT_CHECK(options_.world >= 1, "sampler: world size must be >= 1, got ", options_.world);
  CT_CHECK(options_.rank >= 0 && options_.rank < options_.world, "sampler: rank ", options_.rank,
           " out of range for world size ", options_.world);
  CT_CHECK(options_.batch_size >= 1, "sampler: batch size must be >= 1, got ", options_.batch_size);
  CT_CHECK(options_.num_samples >= 0, "sampler: number of samples must be >= 0, got ", options_.num_samples);
}

int64_t DistributedSampler::num_rank_samples() const {
  const int64_t w = options_.world;
  return (options_.num_samples + w - 1) / w;
}

int64_t DistributedSampler::num_batches() const {
  const int64_t per_rank = num_rank_samples(), b = options_.batch_size;
  return options_.drop_last ? per_rank / b : (per_rank + b - 1) / b;
}

std::vector<int64_t> DistributedSampler::epoch_order(int64_t epoch) const {
  const int64_t n = options_.num_samples;
  std::vector<int64_t> order;
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

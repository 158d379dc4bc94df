#include "train/node_shard.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "kernels/grad_norm.h"

namespace ct::train {

void node_slice(int64_t n, int r, int ranks, int64_t& lo, int64_t& hi) {
  CT_CHECK(ranks >= 1 && r >= 0 && r < ranks && n >= 0, "node_slice: rank ", r, " of ", ranks, ", n ", n);
  constexpr int64_t kAlign = kernels::kGradNormChunk;
  const int64_t units = (n + kAlign - 1) / kAlign;
  auto edge = [&](int k) { return std::min(n, units * k / ranks * kAlign); };
  lo = edge(r);
  hi = r + 1 == ranks ? n : edge(r + 1);
}

std::vector<kernels::SlabRange> clip_ranges(const std::vector<kernels::SlabRange>& ranges, int64_t lo,
                                            int64_t hi) {
  std::vector<kernels::SlabRange> out;
  for (const auto& r : ranges) {
    const int64_t b = std::max(lo, r.offset), e = std::min(hi, r.offset + r.numel);
    if (b < e) out.push_back({b, e - b, r.decay});
  }
  return out;
}

bool node_shard_wanted(const DistContext& dist) {
  if (!dist.distributed()) return false;
  const char* env = std::getenv("CORETRAIN_REPLICATED_OPTIMIZER");
  float replicated = env && std::strcmp(env, "1") == 0 ? 1.0f : 0.0f;
  comm::AllreduceOptions o;
  o.op = comm::ReduceOp::max;
  dist.comm->allreduce(&replicated, 1, DType::f32, o);  // every rank takes the same path
  return replicated == 0.0f && dist.comm->local_size() > 1;
}

bool allocate_node_shard(const DistContext& dist, int64_t n, bool bf16_copies, bool moments, NodeShard& out) {
  comm::Communicator& c = *dist.comm;
  NodeShard s;
  s.ranks = c.local_size();
  node_slice(n, c.local_rank(), s.ranks, s.lo, s.hi);
  const int64_t f32_bytes = n * static_cast<int64_t>(sizeof(float));
  s.params = static_cast<float*>(c.shm_alloc_node(f32_bytes));
  // Every rank takes the same path (the update's barrier is global): all nodes share, or none does.
  float shared = s.params ? 1.0f : 0.0f;
  comm::AllreduceOptions o;
  o.op = comm::ReduceOp::min;
  c.allreduce(&shared, 1, DType::f32, o);
  if (shared == 0.0f) return false;
  if (bf16_copies)
    s.weights_bf16 = static_cast<bf16*>(c.shm_alloc_node(n * static_cast<int64_t>(sizeof(bf16))));
  if (moments) {
    s.exp_avg = static_cast<float*>(c.shm_alloc_node(f32_bytes));
    s.exp_avg_sq = static_cast<float*>(c.shm_alloc_node(f32_bytes));
  }
  const int64_t chunks = (n + kernels::kGradNormChunk - 1) / kernels::kGradNormChunk;
  s.norm_parts = static_cast<double*>(c.shm_alloc_node(chunks * static_cast<int64_t>(sizeof(double))));
  out = s;
  return true;
}

int64_t NodeShard::first_chunk() const {
  return lo / kernels::kGradNormChunk;
}

int64_t NodeShard::last_chunk() const {
  return (hi + kernels::kGradNormChunk - 1) / kernels::kGradNormChunk;
}

double sharded_grad_sq_sum(const DistContext& dist, const NodeShard& shard, const float* grads, int64_t n,
                           const kernels::RowFlags& live) {
  kernels::grad_sq_chunk_sums(grads, n, shard.first_chunk(), shard.last_chunk(), shard.norm_parts, live);
  dist.comm->barrier();
  return kernels::sum_chunks(shard.norm_parts, (n + kernels::kGradNormChunk - 1) / kernels::kGradNormChunk);
}

}  // namespace ct::train

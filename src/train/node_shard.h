// ZeRO stage 1 inside a node, over its shared memory: the node's ranks hold one copy of the f32 weights,
// their bf16 copies and the optimizer's moments in a region every local rank maps, and after the gradient
// all-reduce each rank updates only its own slice of the parameter slab; a barrier then makes every slice
// visible before any rank's next forward reads the weights. (DeepSpeed's stage 1 partitions the moments
// and all-gathers the updated weights; inside a node the weights are shared memory, so the gather is the
// barrier.) What each rank no longer does: (local ranks - 1) / local ranks of the optimizer's pass, a
// memory-bound sweep over ~16 bytes of state per parameter that every rank of a node ran at once, and the
// memory for that state (BERT-base: 1.5 GB per rank). Between nodes nothing changes: every node holds the
// same reduced gradient and computes the same weights.
//
// The gradient norm is sharded the same way: each rank sums the squares of its slice's chunks into a shared
// array and, after a barrier, every rank adds all the chunks in order, as the unsharded norm does.
//
// Bits: the norm's chunk sums are added in the same order and the update is elementwise, so the norm, the
// weights and the moments equal the replicated run's to the bit (tests/train/ddp_test.cpp compares the
// files).
#pragma once

#include <cstdint>
#include <vector>

#include "core/bf16.h"
#include "kernels/optimizer.h"
#include "train/dist_context.h"

namespace ct::train {

// Slice [lo, hi) of a slab of n elements for local rank r of `ranks`: nearly equal, boundaries on multiples
// of the norm's chunk (kernels::kGradNormChunk, 16,384 elements: whole chunks of the norm, and whole cache
// lines of the f32 state and of the bf16 copies, so that no two ranks write one line). Later slices may be
// empty when n is small.
void node_slice(int64_t n, int r, int ranks, int64_t& lo, int64_t& hi);

// `ranges` cut to [lo, hi), in order; ranges outside it are dropped.
std::vector<kernels::SlabRange> clip_ranges(const std::vector<kernels::SlabRange>& ranges, int64_t lo,
                                            int64_t hi);

// A node's shared optimizer state; this rank updates [lo, hi).
struct NodeShard {
  int ranks = 1;
  int64_t lo = 0, hi = 0;
  float* params = nullptr;
  bf16* weights_bf16 = nullptr;  // null in f32
  float* exp_avg = nullptr;      // null without moments (SGD)
  float* exp_avg_sq = nullptr;
  double* norm_parts = nullptr;  // [chunks of the slab]: the gradient norm's chunk sums
  // This slice's chunks of the norm: [first_chunk, last_chunk).
  int64_t first_chunk() const;
  int64_t last_chunk() const;
};

// The gradient's sum of squares (kernels::grad_sq_sum's value, to the bit) with each rank of the node reading
// its slice only: writes its chunk sums, waits at a barrier for the others', adds them all in order.
double sharded_grad_sq_sum(const DistContext& dist, const NodeShard& shard, const float* grads, int64_t n,
                           const kernels::RowFlags& live);

// Whether to shard: the ranks' agreement (one all-reduce) that none has CORETRAIN_REPLICATED_OPTIMIZER=1
// (every rank updating the whole slab, as before, to compare) and that this node has more than one rank.
bool node_shard_wanted(const DistContext& dist);

// Allocates the node's regions (collective over all ranks) for n parameters; false on every rank when the
// ranks of some node share no memory (then `out` is untouched).
bool allocate_node_shard(const DistContext& dist, int64_t n, bool bf16_copies, bool moments, NodeShard& out);

}  // namespace ct::train

// The DDP gradient reducer (the part c10d's reducer.cpp plays): the gradient slab is cut into buckets in the
// order backward finishes gradients (descending slab offset), each bucket's all-reduce (average) starts on
// the communicator's worker threads the moment its last gradient is written, while backward goes on with the
// layers below; finish() launches what an unused parameter held back and waits for all of them.
//
// Buckets follow DDP: a small first bucket (1 MiB, so communication starts early), then buckets of
// --ddp_bucket_cap_mb (25), each closed once it reaches the cap, so a parameter larger than the cap (the word
// embeddings) is a bucket of its own. Buckets are launched strictly in order, which every rank shares, so the
// collectives match across ranks even if some rank finishes gradients in another order.
//
// The model knows nothing of ranks; the trainer hands hook() to the last backward of each optimizer step
// (DDP's no_sync for the others) and calls finish() before clipping.
//
// A parameter whose gradient rows are zero except where the step's tokens landed (the word embeddings: 23M
// of BERT-base's 109M gradients, of which a step of 1,536 tokens per rank touches at most 1,536 rows) is a
// bucket of its own, and only the rows some rank touched are reduced: each rank marks its tokens
// (add_touched_rows), a vocabulary-long max all-reduce of the marks starts with the step's first bucket,
// and the embedding bucket packs the union's rows to its front in place, reduces that prefix and unpacks
// it. Untouched rows are zero on every rank, which is their average. That bucket is the last gradient
// backward finishes, so its reduction was all exposed (5.6% of a BERT-base 2-rank step on the AMX VM).
#pragma once

#include <cstdint>
#include <vector>

#include "comm/communicator.h"
#include "model/model.h"
#include "model/param_info.h"

namespace ct::train {

// A [rows, width] parameter at `offset` in the slab reduced by touched rows (see above); rows 0: none.
struct SparseRows {
  int64_t offset = 0, rows = 0, width = 0;
};

struct DdpOptions {
  double bucket_cap_mb = 25.0;
  int64_t first_bucket_bytes = int64_t{1} << 20;
  SparseRows sparse_rows;
};

class DdpReducer {
 public:
  struct Bucket {
    int64_t begin = 0, end = 0;  // slab range [begin, end), floats
    int64_t ready = 0;           // floats whose gradient is final this step
    bool launched = false;
    bool sparse = false;  // the SparseRows parameter, alone
  };

  // grads: the gradient slab (ideally Communicator::shm_alloc memory, so the node's reduction copies
  // nothing).
  DdpReducer(comm::Communicator& comm, float* grads, const std::vector<model::ParamInfo>& params,
             DdpOptions options = {});

  // The gradient-ready callback for the backward that ends an optimizer step. Resets the step's state on
  // first use after finish().
  model::GradReadyFn hook();
  // Marks the SparseRows rows this rank's gradient may have touched this step (a micro-batch's token ids);
  // call for every micro-batch of the step before its last backward. A no-op without SparseRows.
  void add_touched_rows(const int32_t* ids, int64_t n);
  // Rows reduced by the last step's sparse bucket (the union over ranks), -1 if it ran dense.
  int64_t last_sparse_rows() const { return last_sparse_rows_; }
  // Those rows, ascending (valid while last_sparse_rows() >= 0): after finish() the only rows of that
  // parameter's gradient that may be non-zero.
  const std::vector<int64_t>& last_union_rows() const { return packed_; }
  // Launches any bucket not yet launched (parameters that got no gradient), in order, and waits for every
  // bucket: afterwards the slab holds the average over ranks. Returns the seconds spent waiting here (the
  // communication backward did not hide).
  double finish();

  const std::vector<Bucket>& buckets() const { return buckets_; }
  // Totals since construction (for the progress line and benchmarks).
  double exposed_seconds() const { return exposed_seconds_; }
  int64_t steps() const { return steps_; }

 private:
  void on_ready(int64_t offset, int64_t count);
  void launch_ready_prefix();
  void launch(size_t b);
  void launch_sparse(size_t b);
  void unpack_sparse();

  comm::Communicator& comm_;
  float* grads_;
  std::vector<Bucket> buckets_;
  std::vector<comm::WorkPtr> works_;
  size_t next_launch_ = 0;
  bool in_step_ = false;
  SparseRows sparse_;
  std::vector<float> touched_;   // [sparse_.rows] 1 where this rank's tokens landed; max-reduced in place
  comm::WorkPtr touched_work_;   // that all-reduce, started with the step's first bucket
  std::vector<int64_t> packed_;  // union rows, ascending, packed to the bucket's front this step
  bool is_packed_ = false;
  int64_t last_sparse_rows_ = -1;
  double exposed_seconds_ = 0;
  int64_t steps_ = 0;
};

}  // namespace ct::train

#include "train/ddp_reducer.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace ct::train {

DdpReducer::DdpReducer(comm::Communicator& comm, float* grads, const std::vector<model::ParamInfo>& params,
                       DdpOptions options)
    : comm_(comm), grads_(grads) {
  CT_CHECK(options.bucket_cap_mb > 0, "--ddp_bucket_cap_mb: must be > 0, got ", options.bucket_cap_mb);
  std::vector<const model::ParamInfo*> order;
  for (const auto& p : params) order.push_back(&p);
  // Gradient-ready order: highest slab offset first (QaModel's backward contract).
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->offset > b->offset; });
  const int64_t cap = static_cast<int64_t>(options.bucket_cap_mb * 1024 * 1024);
  int64_t limit = std::min(cap, options.first_bucket_bytes);
  Bucket cur;
  bool open = false;
  for (const auto* p : order) {
    const int64_t b = p->offset, e = p->offset + p->numel();
    if (!open) {
      cur = Bucket{b, e};
      open = true;
    } else {
      CT_ASSERT(e == cur.begin);  // parameters tile the slab
      cur.begin = b;
    }
    if ((cur.end - cur.begin) * static_cast<int64_t>(sizeof(float)) >= limit) {
      buckets_.push_back(cur);
      open = false;
      limit = cap;
    }
  }
  if (open) buckets_.push_back(cur);
  works_.resize(buckets_.size());
}

model::GradReadyFn DdpReducer::hook() {
  return [this](int64_t offset, int64_t count) { on_ready(offset, count); };
}

void DdpReducer::on_ready(int64_t offset, int64_t count) {
  if (!in_step_) {
    for (auto& b : buckets_) {
      b.ready = 0;
      b.launched = false;
    }
    next_launch_ = 0;
    in_step_ = true;
  }
  // Buckets run from the top of the slab down: the one holding `offset` is found by its begin.
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), offset,
                             [](const Bucket& b, int64_t off) { return b.begin > off; });
  CT_ASSERT(it != buckets_.end() && offset >= it->begin && offset + count <= it->end);
  it->ready += count;
  CT_ASSERT(it->ready <= it->end - it->begin);
  launch_ready_prefix();
}

void DdpReducer::launch_ready_prefix() {
  while (next_launch_ < buckets_.size() &&
         buckets_[next_launch_].ready == buckets_[next_launch_].end - buckets_[next_launch_].begin)
    launch(next_launch_++);
}

void DdpReducer::launch(size_t i) {
  Bucket& b = buckets_[i];
  comm::AllreduceOptions o;
  o.op = comm::ReduceOp::avg;
  works_[i] = comm_.allreduce_async(grads_ + b.begin, b.end - b.begin, DType::f32, o);
  b.launched = true;
}

double DdpReducer::finish() {
  const auto t0 = std::chrono::steady_clock::now();
  if (!in_step_) {
    // No gradient was reported (e.g. a backward without the hook): reduce the whole slab.
    for (auto& b : buckets_) b.launched = false;
    next_launch_ = 0;
  }
  // Unused parameters (--ddp_find_unused_parameters) never report: their buckets go now, still in order.
  while (next_launch_ < buckets_.size()) launch(next_launch_++);
  for (auto& w : works_) {
    if (w) w->wait();
    w.reset();
  }
  in_step_ = false;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  exposed_seconds_ += s;
  ++steps_;
  return s;
}

}  // namespace ct::train

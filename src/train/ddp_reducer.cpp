#include "train/ddp_reducer.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace ct::train {

DdpReducer::DdpReducer(comm::Communicator& comm, float* grads, const std::vector<model::ParamInfo>& params,
                       DdpOptions options)
    : comm_(comm), grads_(grads), sparse_(options.sparse_rows) {
  CT_CHECK(options.bucket_cap_mb > 0, "--ddp_bucket_cap_mb: must be > 0, got ", options.bucket_cap_mb);
  if (sparse_.rows > 0) touched_.assign(static_cast<size_t>(sparse_.rows), 0.0f);
  std::vector<const model::ParamInfo*> order;
  for (const auto& p : params) order.push_back(&p);
  // Gradient-ready order: highest slab offset first (EncoderModel's backward contract).
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->offset > b->offset; });
  const int64_t cap = static_cast<int64_t>(options.bucket_cap_mb * 1024 * 1024);
  int64_t limit = std::min(cap, options.first_bucket_bytes);
  Bucket cur;
  bool open = false;
  for (const auto* p : order) {
    const int64_t b = p->offset, e = p->offset + p->numel();
    if (sparse_.rows > 0 && b == sparse_.offset) {
      CT_CHECK(p->numel() == sparse_.rows * sparse_.width, "DDP: sparse-row parameter ", p->name, " has ",
               p->numel(), " elements, expected ", sparse_.rows, " x ", sparse_.width);
      if (open) buckets_.push_back(cur);
      Bucket alone{b, e};
      alone.sparse = true;
      buckets_.push_back(alone);
      open = false;
      limit = cap;
      continue;
    }
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
    // First in this step's queue, so it is done long before the embedding bucket (the last) needs it.
    if (sparse_.rows > 0) {
      comm::AllreduceOptions o;
      o.op = comm::ReduceOp::max;
      touched_work_ = comm_.allreduce_async(touched_.data(), sparse_.rows, DType::f32, o);
    }
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

void DdpReducer::add_touched_rows(const int32_t* ids, int64_t n) {
  if (sparse_.rows == 0) return;
  CT_CHECK(!in_step_, "DDP: add_touched_rows after the step's backward started");
  for (int64_t i = 0; i < n; ++i) {
    CT_CHECK(ids[i] >= 0 && ids[i] < sparse_.rows, "DDP: token id ", ids[i], " outside [0, ", sparse_.rows,
             ")");
    touched_[static_cast<size_t>(ids[i])] = 1.0f;
  }
}

// Rows of the union moved to the bucket's front in ascending order: row r_i goes to slot i <= r_i, and a
// slot i that is itself a union row holds r_i = i or was moved already, so nothing unread is overwritten.
void DdpReducer::launch_sparse(size_t i) {
  Bucket& b = buckets_[i];
  touched_work_->wait();
  touched_work_.reset();
  packed_.clear();
  for (int64_t r = 0; r < sparse_.rows; ++r)
    if (touched_[static_cast<size_t>(r)] != 0.0f) packed_.push_back(r);
  const int64_t w = sparse_.width;
  float* base = grads_ + b.begin;
  for (size_t k = 0; k < packed_.size(); ++k)
    if (packed_[k] != static_cast<int64_t>(k))
      std::copy(base + packed_[k] * w, base + (packed_[k] + 1) * w, base + static_cast<int64_t>(k) * w);
  is_packed_ = true;
  last_sparse_rows_ = static_cast<int64_t>(packed_.size());
  comm::AllreduceOptions o;
  o.op = comm::ReduceOp::avg;
  // Every rank has the same union, so the same count.
  if (!packed_.empty())
    works_[i] = comm_.allreduce_async(base, static_cast<int64_t>(packed_.size()) * w, DType::f32, o);
  b.launched = true;
}

// The reverse, descending: slot i goes back to row r_i >= i, never onto a slot still to be read; then the
// slots that are not union rows are zeroed (they held packed copies).
void DdpReducer::unpack_sparse() {
  const auto& b = *std::find_if(buckets_.begin(), buckets_.end(), [](const Bucket& x) { return x.sparse; });
  const int64_t w = sparse_.width, n = static_cast<int64_t>(packed_.size());
  float* base = grads_ + b.begin;
  for (int64_t k = n - 1; k >= 0; --k) {
    const int64_t r = packed_[static_cast<size_t>(k)];
    if (r != k) std::copy(base + k * w, base + (k + 1) * w, base + r * w);
  }
  size_t next = 0;  // packed_ is ascending: walk it beside the slots
  for (int64_t k = 0; k < n; ++k) {
    while (next < packed_.size() && packed_[next] < k) ++next;
    if (next < packed_.size() && packed_[next] == k) continue;
    std::fill(base + k * w, base + (k + 1) * w, 0.0f);
  }
  is_packed_ = false;
}

void DdpReducer::launch(size_t i) {
  Bucket& b = buckets_[i];
  if (b.sparse && touched_work_) return launch_sparse(i);
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
  if (touched_work_) {  // launched, but no sparse bucket consumed it (not expected; keep ranks in step)
    touched_work_->wait();
    touched_work_.reset();
  }
  if (is_packed_) unpack_sparse();
  if (!in_step_) last_sparse_rows_ = -1;
  std::fill(touched_.begin(), touched_.end(), 0.0f);
  in_step_ = false;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  exposed_seconds_ += s;
  ++steps_;
  return s;
}

}  // namespace ct::train

// Plain Gloo collectives for the benchmark; Gloo's exceptions become ct::Errors naming the call.
#include "comm/baselines_gloo.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <cstring>

#include "core/bf16.h"
#include "core/error.h"

namespace ct::comm {
namespace {

void bf16_sum(void* c, const void* a, const void* b, size_t n) {
  auto* out = static_cast<bf16*>(c);
  auto* x = static_cast<const bf16*>(a);
  auto* y = static_cast<const bf16*>(b);
  for (size_t i = 0; i < n; ++i) out[i] = to_bf16(to_f32(x[i]) + to_f32(y[i]));
}

template <class Fn>
void guarded(const char* what, Fn&& fn) {
  try {
    fn();
  } catch (const gloo::Exception& e) {
    fail("gloo baseline ", what, " failed: ", e.what());
  }
}

}  // namespace

GlooBaseline::GlooBaseline(std::shared_ptr<gloo::Context> context, std::chrono::milliseconds timeout)
    : context_(std::move(context)), timeout_(timeout) {}

void GlooBaseline::allreduce(void* buf, int64_t count, DType dtype) {
  if (count == 0) return;
  gloo::AllreduceOptions opts(context_);
  if (dtype == DType::f32) {
    opts.setOutput(static_cast<float*>(buf), static_cast<size_t>(count));
    opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
  } else {
    opts.setOutput(static_cast<uint16_t*>(buf), static_cast<size_t>(count));
    opts.setReduceFunction(&bf16_sum);
  }
  opts.setTag(tag_++);
  opts.setTimeout(timeout_);
  guarded("allreduce", [&] { gloo::allreduce(opts); });
}

void GlooBaseline::reduce_scatter(const void* send, void* recv, int64_t recv_count, DType dtype) {
  const size_t block = static_cast<size_t>(recv_count * dtype_size(dtype));
  if (block == 0) return;
  scratch_.resize(block * static_cast<size_t>(context_->size));
  std::memcpy(scratch_.data(), send, scratch_.size());
  allreduce(scratch_.data(), recv_count * context_->size, dtype);
  std::memcpy(recv, scratch_.data() + block * static_cast<size_t>(context_->rank), block);
}

void GlooBaseline::allgather(const void* send, void* recv, int64_t send_count, DType dtype) {
  const size_t bytes = static_cast<size_t>(send_count * dtype_size(dtype));
  if (bytes == 0) return;
  gloo::AllgatherOptions opts(context_);
  opts.setInput(const_cast<char*>(static_cast<const char*>(send)), bytes);
  opts.setOutput(static_cast<char*>(recv), bytes * static_cast<size_t>(context_->size));
  opts.setTag(tag_++);
  opts.setTimeout(timeout_);
  guarded("allgather", [&] { gloo::allgather(opts); });
}

void GlooBaseline::alltoall(const void* send, void* recv, int64_t count, DType dtype) {
  const size_t total = static_cast<size_t>(count * dtype_size(dtype)) * static_cast<size_t>(context_->size);
  if (total == 0) return;
  gloo::AlltoallOptions opts(context_);
  opts.setInput(const_cast<char*>(static_cast<const char*>(send)), total);
  opts.setOutput(static_cast<char*>(recv), total);
  opts.setTag(tag_++);
  opts.setTimeout(timeout_);
  guarded("alltoall", [&] { gloo::alltoall(opts); });
}

void GlooBaseline::broadcast(void* buf, int64_t count, DType dtype, int root) {
  const size_t bytes = static_cast<size_t>(count * dtype_size(dtype));
  if (bytes == 0) return;
  gloo::BroadcastOptions opts(context_);
  opts.setOutput(static_cast<char*>(buf), bytes);
  opts.setRoot(root);
  opts.setTag(tag_++);
  opts.setTimeout(timeout_);
  guarded("broadcast", [&] { gloo::broadcast(opts); });
}

void GlooBaseline::barrier() {
  gloo::BarrierOptions opts(context_);
  opts.setTag(tag_++);
  opts.setTimeout(timeout_);
  guarded("barrier", [&] { gloo::barrier(opts); });
}

}  // namespace ct::comm

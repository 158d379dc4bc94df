// Plain Gloo collectives (gloo::allreduce, allgather, alltoall, broadcast, barrier) on a connected Gloo
// context: the second peer of `coretrain bench comm`. What a Gloo user writes: default algorithms, gloo's own
// sum for f32, a widening sum for bf16 (Gloo has no bf16), reduce_scatter as allreduce + keeping one's block
// (Gloo 2022 has no new-style reduce_scatter, which is what torch's ProcessGroupGloo does too).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/tensor.h"

namespace gloo {
class Context;
}

namespace ct::comm {

class GlooBaseline {
 public:
  GlooBaseline(std::shared_ptr<gloo::Context> context, std::chrono::milliseconds timeout);

  void allreduce(void* buf, int64_t count, DType dtype);
  void reduce_scatter(const void* send, void* recv, int64_t recv_count, DType dtype);
  void allgather(const void* send, void* recv, int64_t send_count, DType dtype);
  void alltoall(const void* send, void* recv, int64_t count, DType dtype);
  void broadcast(void* buf, int64_t count, DType dtype, int root);
  void barrier();

 private:
  std::shared_ptr<gloo::Context> context_;
  std::chrono::milliseconds timeout_;
  uint32_t tag_ = 1u << 30;  // apart from GlooTransport's tags when both share a context
  std::vector<char> scratch_;
};

}  // namespace ct::comm

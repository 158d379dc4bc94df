// Transport: the inter-node seam of the hierarchical collectives. A Transport connects one process to a fixed
// group of peers on other nodes (typically the ranks with the same local rank on every node) and moves
// contiguous buffers between them. Implementations: MpiTransport (mpirun launches, mpi_transport.h) and
// GlooTransport (env-var launches, TCP, gloo_transport.h). Kept as small as gloo's transport/pair.h: the
// Communicator owns ordering, dtypes and the intra-node part; a Transport only does what crosses the network.
//
// Contract shared by every implementation:
// - Ops are collective over the group and must be issued in the same order by every member.
// - Reductions run on f32 (wire format f32). bf16 callers use the *_bf16 helpers below, which widen to f32 in
//   bounded chunks, reduce and round once (round-to-nearest-even): one rounding per stage.
// - Data-movement ops (allgather, alltoall, broadcast) are byte-exact and take bytes, so bf16 crosses
// unchanged.
// - Every op takes a timeout; when it fires the op throws ct::Error naming the op, the transport, the group
// and the
//   peer rank(s) not heard from, plus the elapsed time. A dead peer surfaces the same way (or earlier, when
//   the transport sees the connection close).
// - After any error the transport is unusable (the group may be out of step); the caller tears it down.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bf16.h"

namespace ct::comm {

// Reductions a transport performs on the wire. Average is sum followed by a local scale (the caller's job),
// so it is not here.
enum class WireReduce { kSum, kMax, kMin };

const char* wire_reduce_name(WireReduce op);

class Transport {
 public:
  using Timeout = std::chrono::milliseconds;

  virtual ~Transport() = default;

  // "mpi" or "gloo": goes into error messages and benchmark output.
  virtual const char* kind() const = 0;
  // Members of the group in group order, as global ranks (for messages); index() is my position in it.
  const std::vector<int>& ranks() const { return ranks_; }
  int size() const { return static_cast<int>(ranks_.size()); }
  int index() const { return index_; }
  // "gloo group [1,3] (me: rank 3)": how errors name the group.
  std::string describe() const;

  // data[0..count) reduced across the group, result on every member.
  virtual void allreduce(float* data, size_t count, WireReduce op, Timeout timeout) = 0;
  // in holds size() blocks of count floats; member i receives the reduction of block i in out[0..count).
  virtual void reduce_scatter(const float* in, float* out, size_t count, WireReduce op, Timeout timeout) = 0;
  // out holds size() blocks of bytes_per_member; block i comes from member i (mine from in, may alias out's
  // block).
  virtual void allgather(const void* in, void* out, size_t bytes_per_member, Timeout timeout) = 0;
  // in and out hold size() blocks of bytes_per_member; block j of member i's in becomes block i of member j's
  // out.
  virtual void alltoall(const void* in, void* out, size_t bytes_per_member, Timeout timeout) = 0;
  // data[0..bytes) of member root copied to every member.
  virtual void broadcast(void* data, size_t bytes, int root, Timeout timeout) = 0;
  virtual void barrier(Timeout timeout) = 0;

  // bf16 reductions: widened to f32 in chunks of at most kBf16ChunkElems, reduced, rounded once.
  static constexpr size_t kBf16ChunkElems = size_t{1} << 20;
  void allreduce_bf16(bf16* data, size_t count, WireReduce op, Timeout timeout);
  void reduce_scatter_bf16(const bf16* in, bf16* out, size_t count, WireReduce op, Timeout timeout);

 protected:
  Transport(std::vector<int> ranks, int index);
  // Throws the contract's one-line error: "<kind> <op> timed out after N ms in <group>; no answer from
  // rank(s) ...".
  [[noreturn]] void fail_timeout(const char* op, Timeout timeout,
                                 const std::vector<int>& missing_members) const;

 private:
  std::vector<int> ranks_;
  int index_;
};

}  // namespace ct::comm

// Communicator: the public face of the collective library (coretrain's counterpart of a oneCCL communicator
// or a c10d ProcessGroup). One per process, made from the launch environment by make_communicator().
// Collectives act on contiguous f32 or bf16 buffers and must be issued in the same order by every rank; each
// rank posts an op descriptor (op, count, dtype, reduce op, root) per sequence number so a mismatch is
// reported, not silently corrupted. Every collective has a blocking form and an async form returning a Work
// handle; async ops are progressed in issue order by CCL_WORKER_COUNT worker threads (pinned to
// CCL_WORKER_AFFINITY).
//
// Backends: "ccl" (default) = shared memory inside a node + a Transport (MPI or Gloo) between nodes,
// hierarchical; "mpi" / "gloo" = the plain transport for everything. One process alone: no-ops / copies.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ct::comm {

enum class ReduceOp : uint8_t { sum, avg, max, min };
const char* reduce_op_name(ReduceOp op);
ReduceOp parse_reduce_op(const std::string& name);  // "sum" | "avg" | "max" | "min"

enum class Backend : uint8_t { ccl, mpi, gloo };
const char* backend_name(Backend b);
Backend parse_backend(const std::string& name);  // "ccl" | "mpi" | "gloo"; throws naming the value

using Timeout = std::chrono::milliseconds;
// A zero timeout in an options struct means "the communicator's default" (CORETRAIN_COMM_TIMEOUT seconds).
struct AllreduceOptions {
  ReduceOp op = ReduceOp::sum;
  Timeout timeout{0};
};
struct ReduceScatterOptions {
  ReduceOp op = ReduceOp::sum;
  Timeout timeout{0};
};
struct AllgatherOptions {
  Timeout timeout{0};
};
struct AlltoallOptions {
  Timeout timeout{0};
};
struct BroadcastOptions {
  int root = 0;
  Timeout timeout{0};
};
struct BarrierOptions {
  Timeout timeout{0};
};

// Handle of an async collective. wait() blocks until done and rethrows the op's error (every call after the
// first failure rethrows it too); test() polls without blocking (true = finished, successfully or not).
class Work {
 public:
  virtual ~Work() = default;
  virtual void wait() = 0;
  virtual bool test() = 0;
};
using WorkPtr = std::shared_ptr<Work>;

struct CommOptions {
  Backend backend = Backend::ccl;
  // 0 = CORETRAIN_COMM_TIMEOUT (seconds, default 300).
  Timeout timeout{0};
  // -1 = CCL_WORKER_COUNT (default 1).
  int workers = -1;
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  virtual int node() const = 0;
  virtual int num_nodes() const = 0;
  virtual Backend backend() const = 0;
  // "ccl: 4 ranks on 2 nodes (shm + mpi)": for logs.
  virtual std::string describe() const = 0;

  // In place: buf[0..count) reduced over all ranks.
  virtual void allreduce(void* buf, int64_t count, DType dtype, const AllreduceOptions& opts = {}) = 0;
  // send holds size() blocks of recv_count elements; rank i receives the reduction of block i.
  virtual void reduce_scatter(const void* send, void* recv, int64_t recv_count, DType dtype,
                              const ReduceScatterOptions& opts = {}) = 0;
  // recv holds size() blocks of send_count elements; block i comes from rank i.
  virtual void allgather(const void* send, void* recv, int64_t send_count, DType dtype,
                         const AllgatherOptions& opts = {}) = 0;
  // send and recv hold size() blocks of count elements; block j of rank i's send becomes block i of rank j's
  // recv.
  virtual void alltoall(const void* send, void* recv, int64_t count, DType dtype,
                        const AlltoallOptions& opts = {}) = 0;
  // buf[0..count) of root copied to every rank.
  virtual void broadcast(void* buf, int64_t count, DType dtype, const BroadcastOptions& opts = {}) = 0;
  virtual void barrier(const BarrierOptions& opts = {}) = 0;

  // Async forms: buffers must stay alive and untouched until the Work completes.
  virtual WorkPtr allreduce_async(void* buf, int64_t count, DType dtype,
                                  const AllreduceOptions& opts = {}) = 0;
  virtual WorkPtr reduce_scatter_async(const void* send, void* recv, int64_t recv_count, DType dtype,
                                       const ReduceScatterOptions& opts = {}) = 0;
  virtual WorkPtr allgather_async(const void* send, void* recv, int64_t send_count, DType dtype,
                                  const AllgatherOptions& opts = {}) = 0;
  virtual WorkPtr alltoall_async(const void* send, void* recv, int64_t count, DType dtype,
                                 const AlltoallOptions& opts = {}) = 0;
  virtual WorkPtr broadcast_async(void* buf, int64_t count, DType dtype,
                                  const BroadcastOptions& opts = {}) = 0;
  virtual WorkPtr barrier_async(const BarrierOptions& opts = {}) = 0;

  // Memory inside the node's shared segment: collective over the node's ranks (every local rank calls it with
  // the same size, in the same order). Returns 64-byte aligned memory that peers read and write in place, so
  // allreduce on a buffer inside it (e.g. a DDP gradient bucket) moves no copy in or out. Lives until the
  // Communicator is destroyed. Without shared memory (backend mpi/gloo, one process) it is ordinary memory.
  virtual void* shm_alloc(int64_t bytes) = 0;
  // One region of the node's shared segment that every local rank maps: the same memory, each rank at its
  // own address (collective over the node's ranks, like shm_alloc). For state the node's ranks hold once
  // instead of once each (the optimizer's, sharded: train/node_shard.h). Not a collective's buffer.
  // Returns null when the ranks of this node share no memory (one rank per node, backend mpi/gloo).
  virtual void* shm_alloc_node(int64_t bytes) = 0;
};

// The communicator the launch environment describes (mpirun, torchrun-style env, or a single process).
std::unique_ptr<Communicator> make_communicator(const CommOptions& opts = {});
// Over an explicit bootstrap (tests: threads as ranks over an in-memory store).
class Bootstrap;
std::unique_ptr<Communicator> make_communicator(std::shared_ptr<Bootstrap> boot,
                                                const CommOptions& opts = {});

// A CCL_WORKER_AFFINITY core list ("0,2,4-7") as core numbers; throws naming the bad token.
std::vector<int> parse_core_list(const std::string& s);

// CORETRAIN_COMM_TIMEOUT (seconds, default 300) as a duration; throws on a malformed value.
Timeout default_timeout();

}  // namespace ct::comm

// ShmNode: the shared-memory side of a node. One control segment per node (per job) holds, for each channel,
// one flag slot per local rank (a monotonically increasing arrival counter, the rank's op descriptors, a
// failure note) and each rank's double-buffered staging area. A ShmChannel runs the node-local collectives
// over one channel's slots; channels are independent so several worker threads can progress ops at once.
//
// Waiting: spin briefly, then yield, then sleep on a futex the peer rings when it arrives (4 ranks on 2 cores
// must not livelock). Every wait has a deadline and reports the op, its sequence number, the ranks not
// arrived and the elapsed time; a stall warning is logged at half the timeout; a peer whose pid died, or that
// posted a failure, fails the others at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/shm_reduce.h"
#include "comm/shm_segment.h"
#include "core/tensor.h"

namespace ct::comm {

using ShmTimeout = std::chrono::milliseconds;

struct ShmNodeConfig {
  int local_rank = 0;
  int local_size = 1;
  int first_rank = 0;  // global rank of local rank 0 (for messages)
  int node = 0;
  int channels = 1;
  // Per rank, per buffer (two buffers); 0 = 8 MiB / local_size (at least 256 KiB): big pieces mean few
  // synchronisations per op, which is what costs most when ranks share cores; 8 MiB per step stays in L3.
  size_t stage_bytes = 0;
  std::string name;  // control segment, e.g. "/ct-job-1a2b-n0"
  ShmTimeout timeout{std::chrono::seconds(300)};
};

class ShmNode;

class ShmChannel {
 public:
  ShmChannel(ShmNode& node, int index);

  // Node-local collectives (buffers as in communicator.h with local_size ranks). divisor != 0 divides
  // results.
  void allreduce(void* buf, int64_t count, DType dtype, Combine op, float divisor, ShmTimeout timeout);
  void reduce_scatter(const void* send, void* recv, int64_t recv_count, DType dtype, Combine op,
                      float divisor, ShmTimeout timeout);
  void allgather(const void* send, void* recv, int64_t count, DType dtype, ShmTimeout timeout);
  void alltoall(const void* send, void* recv, int64_t count, DType dtype, ShmTimeout timeout);
  void broadcast(void* buf, int64_t count, DType dtype, int root, ShmTimeout timeout);
  void barrier(ShmTimeout timeout);

  // Hierarchical halves. buf is cut into local_size slices (slice()); after reduce_scatter_inplace my slice
  // holds the node's reduction of it; allgather_inplace copies every rank's slice into everyone's buf.
  void reduce_scatter_inplace(void* buf, int64_t count, DType dtype, Combine op, ShmTimeout timeout);
  void allgather_inplace(void* buf, int64_t count, DType dtype, ShmTimeout timeout);

  // Collective over the node: a region of bytes per rank inside a fresh shared segment; returns my part.
  // node_shared: one region of bytes that every rank maps (the same memory at each rank's own address),
  // which no collective treats as a zero-copy buffer.
  void* alloc(int64_t bytes, ShmTimeout timeout, bool node_shared = false);

 private:
  friend class ShmNode;
  struct Slot;
  struct Desc;
  struct Range {
    int64_t lo, len;
  };

  Slot& slot(int r) const;
  uint8_t* stage(int r, int b) const;
  void begin(uint8_t kind, int64_t count, DType dtype, uint8_t op, int32_t root, const void* buf,
             ShmTimeout timeout);
  void arrive();
  void ring(Slot& s);
  void sleep_on(Slot& peer, uint64_t target, std::chrono::microseconds cap);
  void wait_all(uint64_t target, bool check_desc);
  void check_descriptors();
  [[noreturn]] void fail_op(const std::string& what);
  std::string op_name() const;
  int pick_buffer();
  void pipeline_reduce(const uint8_t* src, uint8_t* dst, uint8_t* my_out, const std::vector<Range>& ranges,
                       DType dtype, Combine op, float divisor, bool gather);
  void pipeline_gather(const uint8_t* my_src, uint8_t* dst, const std::vector<Range>& ranges, DType dtype);
  int64_t piece_elems(DType dtype) const;
  // Peer j's address of a zero-copy buffer (mine at p); null if p is not inside an allocation.
  uint8_t* peer_ptr(const void* p, int j) const;

  ShmNode& node_;
  int index_;
  int me_, n_;
  uint64_t seq_ = 0;      // ops begun
  uint64_t counter_ = 0;  // my arrivals (mirrors my slot's counter)
  uint64_t reuse_[2] = {0, 0};
  int next_buffer_ = 0;
  bool broken_ = false;
  std::string broken_reason_;
  // Current op, for messages.
  uint8_t kind_ = 0;
  std::chrono::steady_clock::time_point start_;
  ShmTimeout timeout_{0};
  bool zero_copy_ = false;
  std::vector<const uint8_t*> small_ins_;  // the small allreduce's inputs, kept to avoid an allocation per op
};

class ShmNode {
 public:
  explicit ShmNode(const ShmNodeConfig& config);
  ~ShmNode();
  const ShmNodeConfig& config() const { return config_; }
  ShmChannel& channel(int c) { return *channels_.at(c); }
  int local_rank() const { return config_.local_rank; }
  int local_size() const { return config_.local_size; }
  // Element range of slice i when count elements are cut into parts (first ones larger by one).
  static void slice(int64_t count, int parts, int i, int64_t& lo, int64_t& len);

 private:
  friend class ShmChannel;
  struct Allocation {
    ShmSegment seg;
    size_t stride;  // 0: one region for the whole node (alloc's node_shared), never a rank's own buffer
    size_t bytes;
  };
  int peer_pid(int r) const;

  ShmNodeConfig config_;
  ShmSegment control_;
  std::vector<std::unique_ptr<ShmChannel>> channels_;
  std::mutex alloc_mu_;
  std::vector<Allocation> allocs_;
  size_t slots_offset_ = 0, stage_offset_ = 0;
};

}  // namespace ct::comm

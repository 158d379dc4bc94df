// MpiTransport: the Transport over MPI (MPICH), used when mpirun launched the job. The group is a
// communicator split from the parent; every op is a nonblocking MPI_I* call polled with MPI_Test against a
// deadline, so a stuck or dead peer turns into a ct::Error naming the op and the group instead of a hang. MPI
// itself is initialised by the Communicator's bootstrap (MPI_Init_thread with MPI_THREAD_MULTIPLE when a
// worker thread talks to MPI), never here.
#pragma once

#include <mpi.h>

#include <memory>

#include "comm/transport.h"

namespace ct::comm {

class MpiTransport final : public Transport {
 public:
  // Collective over parent: members passing the same color form one group, ordered by key (e.g. color = local
  // rank, key = node index gives "my local-rank peer on every node"). MPI must already be initialised.
  static std::unique_ptr<MpiTransport> split(MPI_Comm parent, int color, int key);
  ~MpiTransport() override;

  const char* kind() const override { return "mpi"; }
  MPI_Comm comm() const { return comm_; }

  void allreduce(float* data, size_t count, WireReduce op, Timeout timeout) override;
  void reduce_scatter(const float* in, float* out, size_t count, WireReduce op, Timeout timeout) override;
  void allgather(const void* in, void* out, size_t bytes_per_member, Timeout timeout) override;
  void alltoall(const void* in, void* out, size_t bytes_per_member, Timeout timeout) override;
  void broadcast(void* data, size_t bytes, int root, Timeout timeout) override;
  void barrier(Timeout timeout) override;

 private:
  MpiTransport(MPI_Comm comm, std::vector<int> ranks, int index);
  // Polls req until complete or the deadline passes (then throws naming op and group; the request is
  // abandoned).
  void wait(MPI_Request& req, const char* op, Timeout timeout);
  void check(int rc, const char* op) const;

  MPI_Comm comm_;
};

// Polls an MPI request to completion with a deadline; shared with the plain-MPI benchmark baseline. Returns
// false on timeout (the request is left outstanding). Spins on MPI_Test first (latency), then yields, then
// naps.
bool mpi_wait_until(MPI_Request& req, std::chrono::steady_clock::time_point deadline);

}  // namespace ct::comm

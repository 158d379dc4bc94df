// MpiTransport: nonblocking MPI collectives polled against a deadline.
#include "comm/mpi_transport.h"

#include <sched.h>

#include <climits>
#include <thread>

#include "comm/comm_error.h"
#include "core/error.h"

namespace ct::comm {
namespace {

MPI_Op mpi_op(WireReduce op) {
  switch (op) {
    case WireReduce::kSum:
      return MPI_SUM;
    case WireReduce::kMax:
      return MPI_MAX;
    case WireReduce::kMin:
      return MPI_MIN;
  }
  return MPI_SUM;
}

std::string mpi_error_string(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

// MPI counts are int; larger buffers go in pieces of at most this many elements.
constexpr size_t kMaxCount = size_t{1} << 30;

}  // namespace

bool mpi_wait_until(MPI_Request& req, std::chrono::steady_clock::time_point deadline) {
  int done = 0;
  for (long spin = 0;; ++spin) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    // Spinning keeps small-message latency at MPI's; yielding and then napping keeps oversubscribed ranks (4
    // on 2 cores) from starving the peer that has to make progress.
    if (spin < 20000) continue;
    if ((spin & 255) == 0 && std::chrono::steady_clock::now() > deadline) return false;
    if (spin < 200000)
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

MpiTransport::MpiTransport(MPI_Comm comm, std::vector<int> ranks, int index)
    : Transport(std::move(ranks), index), comm_(comm) {}

MpiTransport::~MpiTransport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::unique_ptr<MpiTransport> MpiTransport::split(MPI_Comm parent, int color, int key) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  CT_CHECK(initialized,
           "mpi transport: MPI is not initialised (the Communicator's bootstrap must call MPI_Init_thread)");
  CT_CHECK(color >= 0, "mpi transport: color must be >= 0, got ", color);
  int parent_rank = 0;
  MPI_Comm_rank(parent, &parent_rank);
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_Comm_split(parent, color, key, &comm);
  CT_CHECK(rc == MPI_SUCCESS, "mpi transport: MPI_Comm_split(color ", color, ", key ", key,
           ") failed on rank ", parent_rank, ": ", mpi_error_string(rc));
  // Errors come back as codes so they become ct::Error with context instead of MPI aborting the job.
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int size = 0, index = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &index);
  std::vector<int> ranks(static_cast<size_t>(size));
  MPI_Allgather(&parent_rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, comm);
  return std::unique_ptr<MpiTransport>(new MpiTransport(comm, std::move(ranks), index));
}

void MpiTransport::check(int rc, const char* op) const {
  if (rc == MPI_SUCCESS) return;
  mark_comm_failed();
  fail("mpi ", op, " failed in ", describe(), ": ", mpi_error_string(rc));
}

void MpiTransport::wait(MPI_Request& req, const char* op, Timeout timeout) {
  if (!mpi_wait_until(req, std::chrono::steady_clock::now() + timeout)) {
    // MPI does not say which member is missing: name every other member as a suspect.
    std::vector<int> others;
    for (int i = 0; i < size(); ++i)
      if (i != index()) others.push_back(i);
    fail_timeout(op, timeout, others);
  }
}

void MpiTransport::allreduce(float* data, size_t count, WireReduce op, Timeout timeout) {
  for (size_t off = 0; off < count; off += kMaxCount) {
    int n = static_cast<int>(std::min(kMaxCount, count - off));
    MPI_Request req;
    check(MPI_Iallreduce(MPI_IN_PLACE, data + off, n, MPI_FLOAT, mpi_op(op), comm_, &req), "allreduce");
    wait(req, "allreduce", timeout);
  }
}

void MpiTransport::reduce_scatter(const float* in, float* out, size_t count, WireReduce op, Timeout timeout) {
  CT_CHECK(count <= static_cast<size_t>(INT_MAX), "mpi reduce_scatter: ", count,
           " elements per member exceeds MPI's int");
  MPI_Request req;
  check(MPI_Ireduce_scatter_block(in, out, static_cast<int>(count), MPI_FLOAT, mpi_op(op), comm_, &req),
        "reduce_scatter");
  wait(req, "reduce_scatter", timeout);
}

void MpiTransport::allgather(const void* in, void* out, size_t bytes, Timeout timeout) {
  CT_CHECK(bytes <= static_cast<size_t>(INT_MAX), "mpi allgather: ", bytes,
           " bytes per member exceeds MPI's int");
  // In place when the caller's block already sits in out.
  const void* send = in == static_cast<char*>(out) + bytes * static_cast<size_t>(index()) ? MPI_IN_PLACE : in;
  MPI_Request req;
  check(MPI_Iallgather(send, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes), MPI_BYTE, comm_,
                       &req),
        "allgather");
  wait(req, "allgather", timeout);
}

void MpiTransport::alltoall(const void* in, void* out, size_t bytes, Timeout timeout) {
  CT_CHECK(bytes <= static_cast<size_t>(INT_MAX), "mpi alltoall: ", bytes,
           " bytes per member exceeds MPI's int");
  MPI_Request req;
  check(MPI_Ialltoall(in, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes), MPI_BYTE, comm_,
                      &req),
        "alltoall");
  wait(req, "alltoall", timeout);
}

void MpiTransport::broadcast(void* data, size_t bytes, int root, Timeout timeout) {
  CT_CHECK(root >= 0 && root < size(), "mpi broadcast: root ", root, " outside ", describe());
  for (size_t off = 0; off < bytes; off += kMaxCount) {
    int n = static_cast<int>(std::min(kMaxCount, bytes - off));
    MPI_Request req;
    check(MPI_Ibcast(static_cast<char*>(data) + off, n, MPI_BYTE, root, comm_, &req), "broadcast");
    wait(req, "broadcast", timeout);
  }
}

void MpiTransport::barrier(Timeout timeout) {
  MPI_Request req;
  check(MPI_Ibarrier(comm_, &req), "barrier");
  wait(req, "barrier", timeout);
}

}  // namespace ct::comm

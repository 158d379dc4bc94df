// Plain MPI collectives (MPI_Allreduce, MPI_Reduce_scatter_block, ...) on a communicator: the peer that
// `coretrain bench comm` measures coretrain against. Deliberately what a user of MPI would write, blocking
// calls, no tricks; bf16 (which MPICH 4.0 has no type for) as a 2-byte type with a user op that widens, adds
// and rounds.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "core/tensor.h"

namespace ct::comm {

class MpiBaseline {
 public:
  explicit MpiBaseline(MPI_Comm comm);
  ~MpiBaseline();
  MpiBaseline(const MpiBaseline&) = delete;
  MpiBaseline& operator=(const MpiBaseline&) = delete;

  // Sums, in place.
  void allreduce(void* buf, int64_t count, DType dtype);
  void reduce_scatter(const void* send, void* recv, int64_t recv_count, DType dtype);
  void allgather(const void* send, void* recv, int64_t send_count, DType dtype);
  void alltoall(const void* send, void* recv, int64_t count, DType dtype);
  void broadcast(void* buf, int64_t count, DType dtype, int root);
  void barrier();

 private:
  MPI_Datatype type(DType dtype) const { return dtype == DType::f32 ? MPI_FLOAT : bf16_type_; }
  MPI_Op sum(DType dtype) const { return dtype == DType::f32 ? MPI_SUM : bf16_sum_; }

  MPI_Comm comm_;
  MPI_Datatype bf16_type_ = MPI_DATATYPE_NULL;
  MPI_Op bf16_sum_ = MPI_OP_NULL;
};

}  // namespace ct::comm

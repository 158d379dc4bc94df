// Plain MPI collectives for the benchmark; every error becomes a ct::Error naming the call.
#include "comm/baselines_mpi.h"

#include <climits>

#include "core/bf16.h"
#include "core/error.h"

namespace ct::comm {
namespace {

void bf16_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<const bf16*>(in);
  auto* b = static_cast<bf16*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = to_bf16(to_f32(a[i]) + to_f32(b[i]));
}

int count_of(int64_t n, const char* what) {
  CT_CHECK(n >= 0 && n <= INT_MAX, "mpi baseline ", what, ": count ", n, " does not fit MPI's int");
  return static_cast<int>(n);
}

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fail("mpi baseline ", what, " failed: ", std::string(text, static_cast<size_t>(len)));
}

}  // namespace

MpiBaseline::MpiBaseline(MPI_Comm comm) : comm_(comm) {
  MPI_Type_contiguous(2, MPI_BYTE, &bf16_type_);
  MPI_Type_commit(&bf16_type_);
  MPI_Op_create(&bf16_sum, /*commute=*/1, &bf16_sum_);
}

MpiBaseline::~MpiBaseline() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  MPI_Op_free(&bf16_sum_);
  MPI_Type_free(&bf16_type_);
}

void MpiBaseline::allreduce(void* buf, int64_t count, DType dtype) {
  check(MPI_Allreduce(MPI_IN_PLACE, buf, count_of(count, "allreduce"), type(dtype), sum(dtype), comm_),
        "MPI_Allreduce");
}

void MpiBaseline::reduce_scatter(const void* send, void* recv, int64_t recv_count, DType dtype) {
  check(MPI_Reduce_scatter_block(send, recv, count_of(recv_count, "reduce_scatter"), type(dtype), sum(dtype),
                                 comm_),
        "MPI_Reduce_scatter_block");
}

void MpiBaseline::allgather(const void* send, void* recv, int64_t send_count, DType dtype) {
  int n = count_of(send_count, "allgather");
  check(MPI_Allgather(send, n, type(dtype), recv, n, type(dtype), comm_), "MPI_Allgather");
}

void MpiBaseline::alltoall(const void* send, void* recv, int64_t count, DType dtype) {
  int n = count_of(count, "alltoall");
  check(MPI_Alltoall(send, n, type(dtype), recv, n, type(dtype), comm_), "MPI_Alltoall");
}

void MpiBaseline::broadcast(void* buf, int64_t count, DType dtype, int root) {
  check(MPI_Bcast(buf, count_of(count, "broadcast"), type(dtype), root, comm_), "MPI_Bcast");
}

void MpiBaseline::barrier() {
  check(MPI_Barrier(comm_), "MPI_Barrier");
}

}  // namespace ct::comm

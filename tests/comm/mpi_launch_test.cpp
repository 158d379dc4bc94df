// Runs only under mpiexec (registered in CMakeLists.txt as `mpiexec -n 2/3/4 ct_comm_tests
// --gtest_filter=MpiLaunch.*`); skipped otherwise. Every collective through the default (ccl) communicator
// bootstrapped by MPI, and through the plain MPI backend, against the reference.
#include <gtest/gtest.h>

#include <cstdlib>

#include "comm_test_util.h"

namespace ct::comm::test {
namespace {

bool under_mpiexec() {
  return std::getenv("PMI_RANK") || std::getenv("OMPI_COMM_WORLD_RANK");
}

TEST(MpiLaunch, CclEveryCollective) {
  if (!under_mpiexec()) GTEST_SKIP() << "run under mpiexec";
  auto c = make_communicator();
  ASSERT_EQ(c->size(), std::atoi(std::getenv("PMI_SIZE") ? std::getenv("PMI_SIZE") : "0"));
  const bool one_node = c->num_nodes() == 1;
  verify_collectives(*c, {0, 1, 7, 1000, 40009, (3 << 20) / 4 + 5}, one_node);
  verify_collectives(*c, {1000, 200003}, one_node, true);
  // Async through the worker.
  std::vector<float> v = inputs_f32(c->rank(), 5000);
  auto w = c->allreduce_async(v.data(), 5000, DType::f32, {ReduceOp::avg, {}});
  w->wait();
  for (int64_t i = 0; i < 5000; ++i)
    ASSERT_TRUE(same_value(v[i], ref_reduce(c->size(), i, ReduceOp::avg, false), false, one_node, 10.f)) << i;
}

TEST(MpiLaunch, PlainMpiBackend) {
  if (!under_mpiexec()) GTEST_SKIP() << "run under mpiexec";
  CommOptions o;
  o.backend = Backend::mpi;
  auto c = make_communicator(o);
  verify_collectives(*c, {0, 1, 1000, 40009}, false);
  // A second ccl communicator beside it gets its own shared segment.
  auto d = make_communicator();
  verify_collectives(*d, {1000}, d->num_nodes() == 1, true);
}

}  // namespace
}  // namespace ct::comm::test

// Every collective x dtype x op x size x rank count against a plain reference: ranks as threads (fast, real
// shared memory), as forked processes over the TCP store (what a launch really does), on buffers inside the
// shared segment (zero-copy), async with one and two workers, and hierarchical (two "nodes" joined by Gloo).
#include <gtest/gtest.h>

#include <tuple>

#include "comm_test_util.h"

namespace ct::comm::test {
namespace {

// 0, 1, odd, not a multiple of the vector width nor of the staging piece, and > 3 MiB of f32.
const std::vector<int64_t> kSizes = {0, 1, 7, 1000, 40009, (3 << 20) / 4 + 5};

TEST(Collectives, ThreadsEveryOpRanks1To4) {
  for (int world = 1; world <= 4; ++world)
    run_threads(world, world, [](Communicator& c) { verify_collectives(c, kSizes, true); });
}

TEST(Collectives, ThreadsZeroCopySharedBuffers) {
  for (int world = 2; world <= 4; ++world)
    run_threads(world, world, [](Communicator& c) {
      verify_collectives(c, {0, 1, 1000, 300001}, true, true);
    });
}

TEST(Collectives, ProcessesEveryOpRanks2To4) {
  for (int world = 2; world <= 4; ++world) {
    ForkJob job;
    job.world = world;
    job.run_id = "coll" + std::to_string(world);
    // Small staging with two ranks: many pipeline steps, ragged last pieces.
    if (world == 2) job.env = {{"CORETRAIN_SHM_STAGE_KB", "64"}};
    auto res = run_forked(job, [](int) {
      auto c = make_communicator();
      if (c->size() < 2 || c->local_size() != c->size()) fail("bad topology: ", c->describe());
      verify_collectives(*c, {0, 1, 7, 1000, 40009, 200003}, true);
      verify_collectives(*c, {1000, 200003}, true, true);
    });
    for (auto& r : res)
      EXPECT_EQ(r.exit_code, 0) << "world " << world << " rank " << r.rank << ": " << r.message;
  }
}

TEST(Collectives, SeveralCommunicatorsInOneProcess) {
  // One bootstrap per process (rank 0 hosts the store once); each communicator has its own segment and keys.
  ForkJob job;
  job.world = 3;
  job.run_id = "several";
  auto res = run_forked(job, [](int) {
    auto a = make_communicator();
    CommOptions go;
    go.backend = Backend::gloo;
    auto g = make_communicator(go);
    CommOptions two;
    two.workers = 2;
    auto b = make_communicator(two);
    verify_collectives(*a, {1000, 40009}, true);
    verify_collectives(*g, {1000}, false);
    verify_collectives(*b, {1000, 40009}, true, true);
    verify_collectives(*a, {7}, true);
    a.reset();
    g.reset();
    b.reset();
    // All gone: the next one is a fresh bootstrap generation over the same store.
    auto again = make_communicator();
    verify_collectives(*again, {1000}, true);
  });
  for (auto& r : res) EXPECT_EQ(r.exit_code, 0) << "rank " << r.rank << ": " << r.message;
}

TEST(Collectives, SingleProcessIsCopy) {
  auto c = make_communicator();
  ASSERT_EQ(c->size(), 1);
  auto v = inputs_f32(0, 100);
  auto orig = v;
  c->allreduce(v.data(), 100, DType::f32, {ReduceOp::avg, {}});
  EXPECT_EQ(v, orig);
  std::vector<float> out(100);
  c->allgather(v.data(), out.data(), 100, DType::f32);
  EXPECT_EQ(out, orig);
  c->alltoall(v.data(), out.data(), 100, DType::f32);
  EXPECT_EQ(out, orig);
  c->allreduce_async(v.data(), 100, DType::f32)->wait();
  c->barrier();
  void* p = c->shm_alloc(64);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(c->shm_alloc_node(64), nullptr);  // nothing to share with
}

// shm_alloc_node: one region per node, mapped by each local rank at its own address: what one rank writes the
// others read, another node has its own, and a zero-copy buffer allocated after it still reduces in place.
TEST(Collectives, NodeSharedRegionIsOneMemoryPerNode) {
  run_threads(4, 2, [](Communicator& c) {
    auto* shared = static_cast<int64_t*>(c.shm_alloc_node(4 * sizeof(int64_t)));
    ASSERT_NE(shared, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(shared) % 64, 0u);
    shared[c.local_rank()] = 100 * c.node() + c.rank();
    c.barrier();
    for (int j = 0; j < c.local_size(); ++j)
      EXPECT_EQ(shared[j], 100 * c.node() + c.node() * c.local_size() + j) << "local rank " << j;
    auto* mine = static_cast<float*>(c.shm_alloc(100 * sizeof(float)));
    for (int i = 0; i < 100; ++i) mine[i] = static_cast<float>(c.rank() + i);
    c.allreduce(mine, 100, DType::f32, {ReduceOp::sum, {}});
    for (int i = 0; i < 100; ++i) EXPECT_EQ(mine[i], static_cast<float>(6 + 4 * i));
  });
}

TEST(Collectives, AsyncInIssueOrderWithOneAndTwoWorkers) {
  for (int workers : {1, 2}) {
    CommOptions o;
    o.workers = workers;
    run_threads(
        3, 3,
        [](Communicator& c) {
          const int k = 6;
          const int64_t n = 50001;
          std::vector<std::vector<float>> bufs;
          for (int j = 0; j < k; ++j) bufs.push_back(inputs_f32(c.rank(), n, j * n));
          std::vector<WorkPtr> works;
          for (int j = 0; j < k; ++j) works.push_back(c.allreduce_async(bufs[j].data(), n, DType::f32));
          // A blocking op issued while async ones are queued runs after them.
          std::vector<float> extra = inputs_f32(c.rank(), 17, 999);
          c.allreduce(extra.data(), 17, DType::f32, {ReduceOp::max, {}});
          for (auto& w : works) w->wait();
          for (auto& w : works) EXPECT_TRUE(w->test());
          for (int j = 0; j < k; ++j)
            for (int64_t i = 0; i < n; i += 97)
              if (bufs[j][i] != ref_reduce(c.size(), i, ReduceOp::sum, false, j * n))
                fail("async buffer ", j, " element ", i, " wrong on rank ", c.rank());
          for (int64_t i = 0; i < 17; ++i)
            if (extra[i] != ref_reduce(c.size(), i, ReduceOp::max, false, 999)) fail("blocking max wrong");
        },
        o);
  }
}

TEST(Collectives, WorkerEnvironment) {
  // Two pinned workers per rank: CCL_WORKER_AFFINITY lists the node's cores rank by rank.
  ForkJob job;
  job.world = 2;
  job.run_id = "workers";
  job.env = {{"CCL_WORKER_COUNT", "2"}, {"CCL_WORKER_AFFINITY", "0,1,0-1"}};
  auto res = run_forked(job, [](int rank) {
    auto c = make_communicator();
    std::vector<std::vector<float>> bufs;
    for (int j = 0; j < 4; ++j) bufs.push_back(inputs_f32(rank, 3001, j));
    std::vector<WorkPtr> ws;
    for (int j = 0; j < 4; ++j) ws.push_back(c->allreduce_async(bufs[j].data(), 3001, DType::f32));
    for (auto& w : ws) w->wait();
    for (int j = 0; j < 4; ++j)
      for (int64_t i = 0; i < 3001; ++i)
        if (bufs[j][i] != ref_reduce(2, i, ReduceOp::sum, false, j)) fail("lane result wrong");
  });
  for (auto& r : res) EXPECT_EQ(r.exit_code, 0) << r.message;
  for (auto [k, v, want] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"CCL_WORKER_COUNT", "0", "CCL_WORKER_COUNT='0'"},
           {"CCL_WORKER_AFFINITY", "a,b", "CCL_WORKER_AFFINITY='a,b'"},
           {"CORETRAIN_COMM_TIMEOUT", "soon", "CORETRAIN_COMM_TIMEOUT='soon'"}}) {
    ForkJob bad;
    bad.world = 1;
    bad.env = {{k, v}};
    auto r = run_forked(bad, [](int) { make_communicator(); });
    EXPECT_EQ(r[0].exit_code, 1) << k;
    EXPECT_NE(r[0].message.find(want), std::string::npos) << r[0].message;
  }
  EXPECT_THROW(parse_backend("nccl"), Error);
  EXPECT_EQ(parse_backend("gloo"), Backend::gloo);
  EXPECT_THROW(parse_reduce_op("prod"), Error);
}

TEST(Collectives, HierarchicalTwoNodesOverGlooThreads) {
  // 4 ranks as 2 nodes x 2: shm inside each node, Gloo (loopback TCP) between them.
  run_threads(4, 2, [](Communicator& c) {
    if (c.num_nodes() != 2 || c.local_size() != 2) fail("bad topology: ", c.describe());
    verify_collectives(c, {0, 1, 7, 1000, 40009}, false);
    verify_collectives(c, {1000, 40009}, false, true);
  });
}

TEST(Collectives, HierarchicalTwoNodesProcesses) {
  ForkJob job;
  job.world = 4;
  job.local_world = 2;
  job.run_id = "hier";
  auto res = run_forked(job, [](int) {
    auto c = make_communicator();
    if (c->num_nodes() != 2) fail("bad topology: ", c->describe());
    verify_collectives(*c, {1, 1000, 100003}, false);
  });
  for (auto& r : res) EXPECT_EQ(r.exit_code, 0) << "rank " << r.rank << ": " << r.message;
}

TEST(Collectives, PlainGlooBackend) {
  CommOptions o;
  o.backend = Backend::gloo;
  run_threads(
      3, 3,
      [](Communicator& c) {
        verify_collectives(c, {0, 1, 1000}, false);
      },
      o, "plain-gloo");
}

}  // namespace
}  // namespace ct::comm::test

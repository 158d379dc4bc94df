// DdpReducer: buckets as DDP forms them (small first bucket, then the cap, a large tensor alone), all-reduce
// (average) of every bucket over ranks as threads, including buckets held back by a parameter that got no
// gradient; and the thread plan each rank applies.
#include "train/ddp_reducer.h"

#include <gtest/gtest.h>

#include "../comm/comm_test_util.h"
#include "core/error.h"
#include "train/threads.h"

namespace ct::train {
namespace {

// Parameters of the given sizes (floats), tiling the slab in order.
std::vector<model::ParamInfo> params_of(const std::vector<int64_t>& sizes) {
  std::vector<model::ParamInfo> ps;
  int64_t off = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    model::ParamInfo p;
    p.name = str("p", i);
    p.shape = {sizes[i]};
    p.offset = off;
    off += sizes[i];
    ps.push_back(p);
  }
  return ps;
}

template <class Fn>
void on_ranks(int world, Fn&& body) {
  comm::CommOptions o;
  o.timeout = std::chrono::seconds(20);
  comm::test::run_threads(
      world, world, [&](comm::Communicator& c) { body(c, c.rank()); }, o, "reducer_test");
}

TEST(DdpReducer, BucketsFollowDdpSizing) {
  on_ranks(1, [](comm::Communicator& c, int) {
    // 1 MiB = 262144 floats. Backward order is highest offset first: p5, p4, ...
    const auto ps = params_of({600000, 100000, 200000, 100000, 150000, 100000});
    std::vector<float> g(1250000);
    DdpOptions o;
    o.bucket_cap_mb = 2;  // 524288 floats
    DdpReducer red(c, g.data(), ps, o);
    const auto& b = red.buckets();
    ASSERT_EQ(b.size(), 2u);
    // The first bucket closes once it reaches 1 MiB: p5 + p4 = 250000 floats is short, + p3 = 350000.
    EXPECT_EQ(b[0].begin, ps[3].offset);
    EXPECT_EQ(b[0].end, 1250000);
    // Then the 2 MiB cap: p2 + p1 = 300000 floats stays open until p0 takes it past the cap (DDP closes a
    // bucket after the tensor that fills it, so a tensor larger than the cap never waits for a partner).
    EXPECT_EQ(b[1].begin, 0);
    EXPECT_EQ(b[1].end, ps[3].offset);
  });
}

TEST(DdpReducer, AveragesEveryBucketAcrossRanksEvenWithAnUnusedParameter) {
  const auto ps = params_of({70000, 300000, 5000, 280000, 12});
  const int64_t n = 655012;
  for (int world : {2, 3}) {
    on_ranks(world, [&](comm::Communicator& c, int r) {
      auto* g = static_cast<float*>(c.shm_alloc(n * 4));
      DdpOptions o;
      o.bucket_cap_mb = 1;
      DdpReducer red(c, g, ps, o);
      for (int step = 0; step < 2; ++step) {
        for (int64_t i = 0; i < n; ++i) g[i] = static_cast<float>((r + 1) * (i % 7 + step));
        auto hook = red.hook();
        // p2 gets no gradient (an unused parameter); the others report in backward order.
        for (int i = 4; i >= 0; --i)
          if (i != 2) hook(ps[static_cast<size_t>(i)].offset, ps[static_cast<size_t>(i)].numel());
        red.finish();
        const double mean_factor = (world + 1) / 2.0;  // mean of r + 1 over ranks
        for (int64_t i = 0; i < n; i += 997)
          ASSERT_FLOAT_EQ(g[i], static_cast<float>(mean_factor * (i % 7 + step))) << "element " << i;
        ASSERT_FLOAT_EQ(g[n - 1], static_cast<float>(mean_factor * ((n - 1) % 7 + step)));
      }
      EXPECT_EQ(red.steps(), 2);
    });
  }
}

TEST(ThreadPlan, SharesCoresAndHonoursTheEnvironment) {
  auto p = plan_threads(2, 8, nullptr, nullptr);
  EXPECT_EQ(p.threads, 4);
  EXPECT_FALSE(p.from_env);
  EXPECT_FALSE(p.oversubscribed);
  p = plan_threads(2, 8, nullptr, "0,4");  // two cores pinned to comm workers
  EXPECT_EQ(p.comm_cores, 2);
  EXPECT_EQ(p.threads, 3);
  p = plan_threads(4, 2, nullptr, nullptr);  // more ranks than cores: one thread each, oversubscribed
  EXPECT_EQ(p.threads, 1);
  EXPECT_TRUE(p.oversubscribed);
  p = plan_threads(2, 8, "6", nullptr);
  EXPECT_EQ(p.threads, 6);
  EXPECT_TRUE(p.from_env);
  EXPECT_TRUE(p.oversubscribed);
  EXPECT_EQ(plan_threads(1, 8, nullptr, "auto").threads, 8);
  try {
    plan_threads(1, 8, "two", nullptr);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("OMP_NUM_THREADS"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ct::train

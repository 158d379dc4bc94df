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

// The word-embedding-like parameter reduces only the rows some rank touched: every rank's touched rows get
// the average over ranks (ranks that did not touch a row contribute its zero), untouched rows stay zero,
// across steps with different rows, with gradient accumulation marks (two add_touched_rows per step), and
// a step where a rank touched nothing.
TEST(DdpReducer, SparseRowsReduceTheUnionOfTouchedRowsExactly) {
  const int64_t rows = 50, width = 7;
  const auto ps = params_of({rows * width, 300, 40000});  // the embedding first in the slab, as in BERT
  const int64_t n = rows * width + 300 + 40000;
  for (int world : {2, 3}) {
    on_ranks(world, [&](comm::Communicator& c, int r) {
      auto* g = static_cast<float*>(c.shm_alloc(n * 4));
      DdpOptions o;
      o.bucket_cap_mb = 0.1;
      o.sparse_rows = {0, rows, width};
      DdpReducer red(c, g, ps, o);
      ASSERT_TRUE(red.buckets().back().sparse);
      EXPECT_EQ(red.buckets().back().begin, 0);
      EXPECT_EQ(red.buckets().back().end, rows * width);
      // Step s: rank q touches rows {(q * 7 + s * 3 + k * 11) % rows : k < 3} and row 0, except that rank 1
      // touches nothing in step 2. Row values: (q + 1) * (row + 1) + column.
      auto touched = [&](int q, int s) {
        std::vector<int32_t> t;
        if (q == 1 && s == 2) return t;
        for (int k = 0; k < 3; ++k) t.push_back(static_cast<int32_t>((q * 7 + s * 3 + k * 11) % rows));
        t.push_back(0);
        return t;
      };
      for (int s = 0; s < 3; ++s) {
        std::fill(g, g + n, 0.0f);
        const auto mine = touched(r, s);
        for (int32_t row : mine)
          for (int64_t j = 0; j < width; ++j)
            g[row * width + j] = static_cast<float>((r + 1) * (row + 1) + j);
        for (int64_t i = rows * width; i < n; ++i) g[i] = static_cast<float>(r + 1);
        // Marked in two halves, as two micro-batches would.
        red.add_touched_rows(mine.data(), static_cast<int64_t>(mine.size() / 2));
        red.add_touched_rows(mine.data() + mine.size() / 2,
                             static_cast<int64_t>(mine.size() - mine.size() / 2));
        auto hook = red.hook();
        for (int i = 2; i >= 0; --i)
          hook(ps[static_cast<size_t>(i)].offset, ps[static_cast<size_t>(i)].numel());
        red.finish();
        std::vector<double> want(static_cast<size_t>(rows * width), 0.0);
        std::vector<bool> any(static_cast<size_t>(rows), false);
        for (int q = 0; q < world; ++q)
          for (int32_t row : touched(q, s)) any[static_cast<size_t>(row)] = true;
        for (int q = 0; q < world; ++q) {  // a row a rank lists twice is still one row of its gradient
          std::vector<bool> seen(static_cast<size_t>(rows), false);
          for (int32_t row : touched(q, s)) {
            if (seen[static_cast<size_t>(row)]) continue;
            seen[static_cast<size_t>(row)] = true;
            for (int64_t j = 0; j < width; ++j)
              want[static_cast<size_t>(row * width + j)] +=
                  static_cast<double>((q + 1) * (row + 1) + j) / world;
          }
        }
        int64_t union_rows = 0;
        for (bool a : any) union_rows += a;
        EXPECT_EQ(red.last_sparse_rows(), union_rows) << "step " << s;
        for (int64_t i = 0; i < rows * width; ++i)
          ASSERT_FLOAT_EQ(g[i], static_cast<float>(want[static_cast<size_t>(i)]))
              << "step " << s << " element " << i;
        const float mean = static_cast<float>(world + 1) / 2.0f;
        for (int64_t i = rows * width; i < n; i += 97) ASSERT_FLOAT_EQ(g[i], mean) << "element " << i;
      }
    });
  }
}

// Misuse is a one-line error naming what is wrong: a sparse-row shape that does not match the parameter, a
// token id outside the rows, marks added once the step's backward has started.
TEST(DdpReducer, SparseRowsRefuseAWrongShapeABadIdAndLateMarks) {
  on_ranks(1, [](comm::Communicator& c, int) {
    const auto ps = params_of({50 * 7, 300});
    std::vector<float> g(50 * 7 + 300);
    DdpOptions o;
    o.sparse_rows = {0, 50, 6};
    try {
      DdpReducer bad(c, g.data(), ps, o);
      ADD_FAILURE() << "a 50 x 6 sparse shape was accepted for a 350-element parameter";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("p0 has 350 elements, expected 50 x 6"), std::string::npos)
          << e.what();
    }
    o.sparse_rows = {0, 50, 7};
    DdpReducer red(c, g.data(), ps, o);
    const int32_t out_of_range[] = {3, 50};
    try {
      red.add_touched_rows(out_of_range, 2);
      ADD_FAILURE() << "token id 50 accepted for 50 rows";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("token id 50 outside [0, 50)"), std::string::npos) << e.what();
    }
    auto hook = red.hook();
    hook(ps[1].offset, ps[1].numel());
    const int32_t late[] = {1};
    try {
      red.add_touched_rows(late, 1);
      ADD_FAILURE() << "marks accepted after backward started";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("after the step's backward started"), std::string::npos)
          << e.what();
    }
    hook(ps[0].offset, ps[0].numel());
    red.finish();
  });
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

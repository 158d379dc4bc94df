// Column blocks for row-ordered column sums: they tile the columns exactly, within the width cap and an even
// share per thread; and bias_backward's sums do not depend on the split.
#include "kernels/column_blocks.h"

#include <omp.h>

#include <cstring>

#include "kernels/linear.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

TEST(ColumnBlocks, TileTheColumnsAtEveryTeamSize) {
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3, 16, 64}) {
    omp_set_num_threads(threads);
    for (int64_t cols : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{50}, int64_t{768}, int64_t{2304},
                         int64_t{3072}, int64_t{50000}}) {
      for (bool parallel : {false, true}) {
        const ColumnBlocks cb(cols, parallel);
        EXPECT_GE(cb.width, 16) << cols;
        EXPECT_LE(cb.width, ColumnBlocks::kMaxWidth) << cols;
        EXPECT_EQ(cb.width % 16, 0) << cols;
        int64_t next = 0;
        for (int64_t b = 0; b < cb.count; ++b) {
          EXPECT_EQ(cb.begin(b), next);
          EXPECT_GT(cb.end(b, cols), cb.begin(b));
          next = cb.end(b, cols);
        }
        EXPECT_EQ(next, cols) << cols << " columns, " << threads << " threads";
        // No block wider than an even share of the columns for the team (rounded up to 16), so no thread
        // sums more than its share.
        if (parallel) {
          const int64_t share = ((cols + threads - 1) / threads + 15) / 16 * 16;
          EXPECT_LE(cb.width, std::max<int64_t>(16, share)) << cols << " / " << threads;
        } else {
          EXPECT_EQ(cb.count, (cols + ColumnBlocks::kMaxWidth - 1) / ColumnBlocks::kMaxWidth) << cols;
        }
      }
    }
  }
  omp_set_num_threads(saved);
}

// BERT-base's bias widths, sums added into existing values: the same bits at 1, 2 and 3 threads (different
// splits) and each column equal to its rows summed in order.
TEST(ColumnBlocks, BiasSumsDoNotDependOnTheSplit) {
  const int saved = omp_get_max_threads();
  for (int64_t cols : {int64_t{768}, int64_t{2304}, int64_t{3072}, int64_t{37}}) {
    const int64_t rows = 97;
    const auto d = test::randn(rows * cols, 11 + cols);
    const auto start = test::randn(cols, 5);
    std::vector<float> want = start;
    for (int64_t c = 0; c < cols; ++c) {
      float acc = 0.0f;
      for (int64_t r = 0; r < rows; ++r) acc += d[r * cols + c];
      want[c] += acc;
    }
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      std::vector<float> got = start;
      bias_backward(got.data(), d.data(), rows, cols);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * cols), 0) << cols << " / " << threads;
    }
  }
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace ct::kernels

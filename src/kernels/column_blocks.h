// How column reductions over [rows, cols] (bias gradients: each column's rows summed in row order) split
// their columns among threads. Every column's sum walks its rows in order whatever the split, so the split
// changes no bits: it is chosen for speed alone. One block per thread (a multiple of the team when a block
// would be wider than kMaxWidth), each as wide as that allows: long contiguous reads of every row, the
// block's sums in L1, and no thread left with more columns than the others.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace ct::kernels {

struct ColumnBlocks {
  static constexpr int64_t kMaxWidth = 1024;  // floats: a block's sums take 4 KB
  int64_t width = 0;                          // columns per block, a multiple of 16 (the last may be less)
  int64_t count = 0;                          // blocks

  // parallel: whether the caller's loop over blocks runs on the team (else one thread takes them all).
  ColumnBlocks(int64_t cols, bool parallel) {
    const int64_t threads = parallel && !omp_in_parallel() ? std::max(1, omp_get_max_threads()) : 1;
    const int64_t per_thread = (cols + threads * kMaxWidth - 1) / (threads * kMaxWidth);
    const int64_t target = std::max<int64_t>(1, threads * per_thread);
    width = std::min(kMaxWidth, ((cols + target - 1) / target + 15) / 16 * 16);
    width = std::max<int64_t>(width, 16);
    count = (cols + width - 1) / width;
  }
  int64_t begin(int64_t b) const { return b * width; }
  int64_t end(int64_t b, int64_t cols) const { return std::min(cols, (b + 1) * width); }
};

}  // namespace ct::kernels

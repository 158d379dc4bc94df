// aligned_alloc_shared: 64-byte aligned, zeroed, writable to its last byte at every size, on both sides of
// the size where blocks come from mmap instead of the heap, from inside a parallel region too, and zeroed
// again when a block is reused after release.
#include "core/tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace ct {
namespace {

bool all_zero(const unsigned char* p, size_t n) {
  return std::all_of(p, p + n, [](unsigned char c) { return c == 0; });
}

TEST(AlignedAllocShared, ZeroedAlignedAndWritableAtEverySize) {
  const int64_t mib = int64_t{1} << 20;
  for (const int64_t n : std::vector<int64_t>{0, 1, 100, 16 * mib - 1, 16 * mib, 40 * mib + 7}) {
    for (int round = 0; round < 2; ++round) {  // the second block may reuse the first's memory
      auto p = aligned_alloc_shared(n);
      ASSERT_NE(p.get(), nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % 64, 0u) << n;
      auto* c = static_cast<unsigned char*>(p.get());
      EXPECT_TRUE(all_zero(c, static_cast<size_t>(n))) << n << " bytes, round " << round;
      std::memset(c, 0xab, static_cast<size_t>(n));
    }
  }
}

TEST(AlignedAllocShared, LargeBlocksFromInsideAParallelRegion) {
  const int64_t n = int64_t{24} << 20;
  std::vector<std::shared_ptr<void>> blocks(4);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < 4; ++i) blocks[i] = aligned_alloc_shared(n);
  for (const auto& b : blocks) {
    ASSERT_NE(b.get(), nullptr);
    EXPECT_TRUE(all_zero(static_cast<const unsigned char*>(b.get()), static_cast<size_t>(n)));
  }
}

}  // namespace
}  // namespace ct

// The 16-lane helpers against plain loops: load / store round trips at unaligned addresses, permute and
// reversed by index, transpose16 on a matrix whose every element is distinct.
#include "kernels/vec16.h"

#include <gtest/gtest.h>

#include <vector>

namespace ct::kernels {
namespace {

TEST(Vec16, LoadStorePermuteReverseAtUnalignedAddresses) {
  std::vector<float> buf(40);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(i) * 0.5f;
  std::vector<int32_t> ints(40);
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<int32_t>(i);
  const v16f v = load16(buf.data() + 3);
  const v16i rev = reversed(load16(ints.data() + 5));
  for (int t = 0; t < 16; ++t) {
    EXPECT_EQ(v[t], buf[3 + t]);
    EXPECT_EQ(rev[t], 20 - t);
  }
  const v16i idx = {3, 3, 0, 15, 7, 1, 1, 2, 9, 8, 14, 13, 0, 0, 5, 4};
  const v16f got = permute(v, idx);
  for (int t = 0; t < 16; ++t) EXPECT_EQ(got[t], buf[3 + idx[t]]) << t;
  std::vector<float> out(40, -1.0f);
  store16(out.data() + 7, got);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(out[i], i >= 7 && i < 23 ? got[i - 7] : -1.0f) << i;
}

TEST(Vec16, Transpose16MovesEveryElementAcross) {
  v16f r[16];
  for (int i = 0; i < 16; ++i)
    for (int c = 0; c < 16; ++c) r[i][c] = static_cast<float>(100 * i + c);
  transpose16(r);
  for (int i = 0; i < 16; ++i)
    for (int c = 0; c < 16; ++c) EXPECT_EQ(r[i][c], static_cast<float>(100 * c + i)) << i << ", " << c;
}

}  // namespace
}  // namespace ct::kernels

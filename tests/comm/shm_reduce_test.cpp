// Reduction kernels: the AVX-512 path equals the scalar one bit for bit (every op, 1..5 inputs, tails of
// every length), bf16 equals the f32 reduction of the widened inputs rounded once, and several outputs get
// one value.
#include "comm/shm_reduce.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "comm_test_util.h"

namespace ct::comm {
namespace {

TEST(ShmReduce, VectorEqualsScalarF32AndBf16) {
  for (int n_in = 1; n_in <= 5; ++n_in)
    for (int64_t count : {0, 1, 15, 16, 17, 33, 1000, 4099})
      for (Combine op : {Combine::sum, Combine::max, Combine::min})
        for (float div : {0.f, 3.f}) {
          std::vector<std::vector<float>> in(n_in);
          std::vector<std::vector<bf16>> inb(n_in);
          std::vector<const float*> ip;
          std::vector<const bf16*> ipb;
          for (int k = 0; k < n_in; ++k) {
            in[k] = test::inputs_f32(k, count);
            inb[k] = test::inputs_bf16(k, count);
            ip.push_back(in[k].data());
            ipb.push_back(inb[k].data());
          }
          std::vector<float> a(count + 1, -7.f), b(count + 1, -7.f), c(count + 1, -7.f);
          float* outs[2] = {a.data(), c.data()};
          float* outb = b.data();
          reduce_f32(ip.data(), n_in, outs, 2, count, op, div);
          reduce_f32_scalar(ip.data(), n_in, &outb, 1, count, op, div);
          ASSERT_EQ(std::memcmp(a.data(), b.data(), (count + 1) * 4), 0)
              << "f32 n_in=" << n_in << " count=" << count;
          ASSERT_EQ(a, c);
          EXPECT_EQ(a[count], -7.f) << "wrote past the end";
          std::vector<bf16> x(count + 1, bf16{0x1234}), y(count + 1, bf16{0x1234});
          bf16* ox = x.data();
          bf16* oy = y.data();
          reduce_bf16(ipb.data(), n_in, &ox, 1, count, op, div);
          reduce_bf16_scalar(ipb.data(), n_in, &oy, 1, count, op, div);
          ASSERT_EQ(std::memcmp(x.data(), y.data(), (count + 1) * 2), 0)
              << "bf16 n_in=" << n_in << " count=" << count;
          for (int64_t i = 0; i < count; ++i) {
            float v = to_f32(inb[0][i]);
            for (int k = 1; k < n_in; ++k) {
              float w = to_f32(inb[k][i]);
              v = op == Combine::sum ? v + w : op == Combine::max ? (v > w ? v : w) : (v < w ? v : w);
            }
            if (div != 0.f) v /= div;
            ASSERT_EQ(x[i].bits, to_bf16(v).bits) << "bf16 not rounded once at " << i;
          }
        }
}

TEST(ShmReduce, Bf16RoundsToNearestEvenAndKeepsNaN) {
  // 1 + 2^-8 is a tie between bf16 1.0 and 1.0078125: even wins (1.0); 1 + 3*2^-8 rounds up.
  std::vector<bf16> a = {to_bf16(1.f), to_bf16(1.f), to_bf16(std::nanf(""))};
  std::vector<bf16> b = {to_bf16(0.00390625f), to_bf16(0.01171875f), to_bf16(1.f)};
  std::vector<bf16> out(3);
  const bf16* in[2] = {a.data(), b.data()};
  bf16* o = out.data();
  reduce_bf16(in, 2, &o, 1, 3, Combine::sum, 0.f);
  EXPECT_EQ(out[0].bits, to_bf16(1.f).bits);
  EXPECT_EQ(out[1].bits, to_bf16(1.015625f).bits);
  EXPECT_TRUE(std::isnan(to_f32(out[2])));
}

TEST(ShmReduce, CopyBytes) {
  for (size_t n : {0, 1, 63, 64, 255, 256, 257, 100000}) {
    std::vector<uint8_t> s(n), d(n + 1, 0xee);
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<uint8_t>(i * 13 + 1);
    copy_bytes(d.data(), s.data(), n);
    if (n > 0) {
      EXPECT_EQ(std::memcmp(d.data(), s.data(), n), 0);
    }
    EXPECT_EQ(d[n], 0xee);
  }
}

}  // namespace
}  // namespace ct::comm

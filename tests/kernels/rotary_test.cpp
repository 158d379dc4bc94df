// Rotary embeddings: forward vs the double reference (torch's f32 angles), backward as the transpose
// (finite differences of a linear loss), in place within fused qkv rows, and the position check.
#include "kernels/rotary.h"

#include "core/error.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

TEST(Rotary, ForwardMatchesReferenceOnQueryAndKeyOfFusedRows) {
  // Past the threading threshold (rows * heads * d / 2 > 16384).
  const int64_t rows = 1100, heads = 3, d = 16, H = heads * d, stride = 3 * H;
  auto qkv = test::randn(rows * stride, 1);
  std::vector<int32_t> pos(rows);
  for (int64_t r = 0; r < rows; ++r)
    pos[r] = static_cast<int32_t>((r * 173) % 8000);  // up to ModernBERT's 8k
  const auto table = make_rotary_table(8192, d, 160000.0);
  auto got = qkv;
  rotary_forward(got.data(), pos.data(), rows, heads, stride, table);      // q
  rotary_forward(got.data() + H, pos.data(), rows, heads, stride, table);  // k
  std::vector<float> want = qkv;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t part = 0; part < 2; ++part)
      for (int64_t h = 0; h < heads; ++h) {
        std::vector<double> v(d);
        float* w = want.data() + r * stride + part * H + h * d;
        for (int64_t i = 0; i < d; ++i) v[i] = w[i];
        rotary_reference(v.data(), d, pos[r], 160000.0);
        for (int64_t i = 0; i < d; ++i) w[i] = static_cast<float>(v[i]);
      }
  test::expect_close(got, want, 1e-5, 1e-5, "rotated q and k");
  // The value third of each row is untouched.
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 2 * H; i < 3 * H; ++i) ASSERT_EQ(qkv[r * stride + i], got[r * stride + i]);
}

TEST(Rotary, BackwardIsTheTransposeByFiniteDifferences) {
  const int64_t rows = 5, heads = 2, d = 8, stride = heads * d;
  auto x = test::randn(rows * stride, 2), w = test::randn(rows * stride, 3);
  std::vector<int32_t> pos{0, 1, 7, 100, 511};
  const auto table = make_rotary_table(512, d, 10000.0);
  // loss = sum(w * rotary(x)): d loss / dx = R^T w.
  auto loss = [&] {
    auto y = x;
    rotary_forward(y.data(), pos.data(), rows, heads, stride, table);
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += static_cast<double>(w[i]) * y[i];
    return s;
  };
  auto grad = w;
  rotary_backward(grad.data(), pos.data(), rows, heads, stride, table);
  test::expect_fd(loss, x.data(), grad.data(), rows * stride, 1e-2, 1e-3, 1e-3, "d rotary / dx");
  // Forward then backward is the identity (rotations are orthogonal).
  auto y = x;
  rotary_forward(y.data(), pos.data(), rows, heads, stride, table);
  rotary_backward(y.data(), pos.data(), rows, heads, stride, table);
  test::expect_close(y, x, 1e-6, 1e-6, "R^T R x");
}

TEST(Rotary, RefusesPositionsOutsideTheTableAndOddHeads) {
  const auto table = make_rotary_table(16, 4, 10000.0);
  std::vector<float> x(4);
  std::vector<int32_t> pos{16};
  EXPECT_THROW(
      {
        try {
          rotary_forward(x.data(), pos.data(), 1, 1, 4, table);
        } catch (const Error& e) {
          EXPECT_STREQ("rotary embedding: row 0 has position 16 outside the table of 16 positions", e.what());
          throw;
        }
      },
      Error);
  EXPECT_THROW(make_rotary_table(16, 5, 10000.0), Error);
}

}  // namespace
}  // namespace ct::kernels

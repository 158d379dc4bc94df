// Layer norm: optimized vs double reference, backward vs reference and finite differences, ADD semantics.
#include "kernels/layernorm.h"

#include <omp.h>

#include <limits>

#include "test_util.h"

namespace ct::kernels {
namespace {

using test::expect_close;
using test::randn;

TEST(LayerNorm, ForwardMatchesReferenceAndWritesBf16Copy) {
  const int64_t N = 7, C = 77;
  auto x = randn(N * C, 1, 3.0f), w = randn(C, 2), b = randn(C, 3);
  for (auto& v : x) v += 5.0f;  // an offset makes naive one-pass variance lose digits
  std::vector<float> y(N * C), m(N), rs(N), yr(N * C), mr(N), rsr(N);
  std::vector<bf16> ybf(N * C);
  layernorm_forward(y.data(), ybf.data(), m.data(), rs.data(), x.data(), w.data(), b.data(), N, C, 1e-12f);
  layernorm_forward_reference(yr.data(), mr.data(), rsr.data(), x.data(), w.data(), b.data(), N, C, 1e-12f);
  expect_close(y, yr, 1e-5, 1e-5, "out");
  expect_close(m, mr, 1e-6, 1e-6, "mean");
  expect_close(rs, rsr, 1e-6, 1e-5, "rstd");
  for (int64_t i = 0; i < N * C; ++i) EXPECT_EQ(ybf[i].bits, to_bf16(y[i]).bits);
}

// LayerNorm(bias=False) (ModernBERT): a null bias is a zero one, forward and backward.
TEST(LayerNorm, NullBiasIsZeroBias) {
  const int64_t N = 6, C = 40;
  auto x = randn(N * C, 8), w = randn(C, 9), r = randn(N * C, 10);
  const std::vector<float> zero(C, 0.0f);
  std::vector<float> y(N * C), m(N), rs(N), y0(N * C), m0(N), rs0(N);
  std::vector<bf16> ybf(N * C);
  layernorm_forward(y.data(), ybf.data(), m.data(), rs.data(), x.data(), w.data(), nullptr, N, C, 1e-5f);
  layernorm_forward(y0.data(), nullptr, m0.data(), rs0.data(), x.data(), w.data(), zero.data(), N, C, 1e-5f);
  EXPECT_EQ(y, y0);
  for (int64_t i = 0; i < N * C; ++i) EXPECT_EQ(ybf[i].bits, to_bf16(y[i]).bits);
  std::vector<float> dx(N * C), dw(C, 0.0f), dx0(N * C), dw0(C, 0.0f), db0(C, 0.0f);
  layernorm_backward(dx.data(), dw.data(), nullptr, r.data(), x.data(), w.data(), m.data(), rs.data(), N, C,
                     false);
  layernorm_backward(dx0.data(), dw0.data(), db0.data(), r.data(), x.data(), w.data(), m.data(), rs.data(), N,
                     C, false);
  EXPECT_EQ(dx, dx0);
  EXPECT_EQ(dw, dw0);
}

TEST(LayerNorm, BackwardMatchesReferenceAndFiniteDifferences) {
  const int64_t N = 5, C = 70;
  auto x = randn(N * C, 4), w = randn(C, 5), b = randn(C, 6), r = randn(N * C, 7);
  std::vector<float> y(N * C), m(N), rs(N);
  layernorm_forward(y.data(), nullptr, m.data(), rs.data(), x.data(), w.data(), b.data(), N, C, 1e-5f);
  std::vector<float> dx(N * C, 0.5f), dw(C, 0.5f), db(C, 0.5f);
  std::vector<float> dxr(N * C, 0.5f), dwr(C, 0.5f), dbr(C, 0.5f);
  layernorm_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), m.data(), rs.data(), N,
                     C);
  layernorm_backward_reference(dxr.data(), dwr.data(), dbr.data(), r.data(), x.data(), w.data(), m.data(),
                               rs.data(), N, C);
  expect_close(dx, dxr, 1e-5, 1e-4, "dinp");
  expect_close(dw, dwr, 1e-5, 1e-4, "dweight");
  expect_close(db, dbr, 1e-5, 1e-4, "dbias");
  for (auto* v : {&dx, &dw, &db})
    for (auto& e : *v) e -= 0.5f;  // started at 0.5: backward adds
  auto loss = [&] {
    std::vector<float> yy(N * C), mm(N), rr(N);
    layernorm_forward_reference(yy.data(), mm.data(), rr.data(), x.data(), w.data(), b.data(), N, C, 1e-5f);
    return test::dot(yy, r);
  };
  test::expect_fd(loss, x.data(), dx.data(), N * C, 1e-3, 2e-3, 1e-2, "dinp");
  test::expect_fd(loss, w.data(), dw.data(), C, 1e-3, 2e-3, 1e-2, "dweight");
  test::expect_fd(loss, b.data(), db.data(), C, 1e-3, 2e-3, 1e-2, "dbias");
}

TEST(LayerNorm, OverwriteModeReplacesDinpAndStillAddsWeightGradients) {
  const int64_t N = 3, C = 50;
  auto x = test::randn(N * C, 12), w = test::randn(C, 13), b = test::randn(C, 14), r = test::randn(N * C, 15);
  std::vector<float> y(N * C), m(N), rs(N);
  layernorm_forward(y.data(), nullptr, m.data(), rs.data(), x.data(), w.data(), b.data(), N, C, 1e-12f);
  std::vector<float> dx_add(N * C, 0.0f), dw_add(C, 2.0f), db_add(C, 2.0f);
  std::vector<float> dx_over(N * C, std::numeric_limits<float>::quiet_NaN()), dw_over(C, 2.0f),
      db_over(C, 2.0f);
  layernorm_backward(dx_add.data(), dw_add.data(), db_add.data(), r.data(), x.data(), w.data(), m.data(),
                     rs.data(), N, C);
  layernorm_backward(dx_over.data(), dw_over.data(), db_over.data(), r.data(), x.data(), w.data(), m.data(),
                     rs.data(), N, C, false);
  EXPECT_EQ(dx_add, dx_over);
  EXPECT_EQ(dw_add, dw_over);
  EXPECT_EQ(db_add, db_over);
}

TEST(LayerNorm, WeightGradientsDoNotDependOnThreadCount) {
  const int64_t N = 64, C = 130;
  auto x = randn(N * C, 8), w = randn(C, 9), b = randn(C, 10), r = randn(N * C, 11);
  std::vector<float> y(N * C), m(N), rs(N);
  layernorm_forward(y.data(), nullptr, m.data(), rs.data(), x.data(), w.data(), b.data(), N, C, 1e-12f);
  auto grads = [&](int threads) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<float> dw(C), db(C);
    layernorm_backward(nullptr, dw.data(), db.data(), r.data(), x.data(), w.data(), m.data(), rs.data(), N,
                       C);
    omp_set_num_threads(saved);
    dw.insert(dw.end(), db.begin(), db.end());
    return dw;
  };
  EXPECT_EQ(grads(1), grads(2));
  EXPECT_EQ(grads(1), grads(3));
}

}  // namespace
}  // namespace ct::kernels

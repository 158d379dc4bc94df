// The post-LN block tail fused into one pass (dropout + residual + layer norm, and its backward): the same
// masks as dropout_forward, values against the separate kernels' references, finite differences, and a
// packed batch's rows drawing the padded layout's masks.
#include <omp.h>

#include <limits>

#include "core/error.h"
#include "kernels/dropout.h"
#include "kernels/layernorm.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

using test::expect_close;
using test::randn;

struct Forward {
  std::vector<float> res, out, mean, rstd;
  std::vector<bf16> out_b;
};

Forward run_forward(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& w,
                    const std::vector<float>& bias, int64_t N, int64_t C, const DropoutSite& site,
                    const int64_t* row_pos = nullptr) {
  Forward f;
  f.res.assign(N * C, std::numeric_limits<float>::quiet_NaN());
  f.out.assign(N * C, 0.0f);
  f.mean.assign(N, 0.0f);
  f.rstd.assign(N, 0.0f);
  f.out_b.resize(N * C);
  dropout_residual_layernorm_forward(f.res.data(), f.out.data(), f.out_b.data(), f.mean.data(), f.rstd.data(),
                                     a.data(), b.data(), w.data(), bias.data(), N, C, 1e-12f, site, row_pos);
  return f;
}

TEST(DropoutResidualLayerNorm, ForwardIsDropoutThenAddThenLayerNorm) {
  const int64_t N = 9, C = 70;  // C not a multiple of the Philox run: rows start mid-run
  auto a = randn(N * C, 1), b = randn(N * C, 2, 2.0f), w = randn(C, 3), bias = randn(C, 4);
  for (const float p : {0.0f, 0.1f, 0.5f}) {
    const DropoutSite site{p, 42, 7, (5ull << 40) + 3};
    const Forward f = run_forward(a, b, w, bias, N, C, site);
    std::vector<uint8_t> keep(N * C);
    dropout_mask_reference(keep.data(), N * C, site);
    std::vector<float> want(N * C);
    dropout_forward(want.data(), nullptr, a.data(), N * C, site);
    int64_t dropped = 0;
    for (int64_t i = 0; i < N * C; ++i) {
      if (!keep[i]) {  // a dropped element leaves the residual exactly
        EXPECT_EQ(f.res[i], b[i]) << "p " << p << " element " << i;
        ++dropped;
      }
      want[i] += b[i];
    }
    if (p == 0.0f) {
      EXPECT_EQ(dropped, 0);
    } else {
      EXPECT_GT(dropped, 0);
    }
    expect_close(f.res, want, 1e-6, 1e-6, "res");
    std::vector<float> out(N * C), m(N), rs(N);
    layernorm_forward_reference(out.data(), m.data(), rs.data(), f.res.data(), w.data(), bias.data(), N, C,
                                1e-12f);
    expect_close(f.out, out, 1e-5, 1e-5, "out");
    expect_close(f.mean, m, 1e-6, 1e-6, "mean");
    expect_close(f.rstd, rs, 1e-6, 1e-5, "rstd");
    for (int64_t i = 0; i < N * C; ++i) EXPECT_EQ(f.out_b[i].bits, to_bf16(f.out[i]).bits);
  }
}

TEST(DropoutResidualLayerNorm, BackwardMatchesReferencesAndFiniteDifferences) {
  const int64_t N = 5, C = 48;
  auto a = randn(N * C, 5), b = randn(N * C, 6), w = randn(C, 7), bias = randn(C, 8), r = randn(N * C, 9);
  const DropoutSite site{0.25f, 3, 1, 17};
  const Forward f = run_forward(a, b, w, bias, N, C, site);
  // dres aliases dout, as the model calls it; dweight/dbias add to what is there.
  std::vector<float> dres = r, dinp(N * C, std::numeric_limits<float>::quiet_NaN()), dw(C, 0.5f), db(C, 0.5f);
  std::vector<bf16> dinp_b(N * C);
  dropout_residual_layernorm_backward(dres.data(), dinp.data(), dinp_b.data(), dw.data(), db.data(),
                                      dres.data(), f.res.data(), w.data(), f.mean.data(), f.rstd.data(), N, C,
                                      site);
  std::vector<float> dres_ref(N * C, 0.0f), dw_ref(C, 0.5f), db_ref(C, 0.5f);
  layernorm_backward_reference(dres_ref.data(), dw_ref.data(), db_ref.data(), r.data(), f.res.data(),
                               w.data(), f.mean.data(), f.rstd.data(), N, C);
  expect_close(dres, dres_ref, 1e-5, 1e-4, "dres");
  expect_close(dw, dw_ref, 1e-5, 1e-4, "dweight");
  expect_close(db, db_ref, 1e-5, 1e-4, "dbias");
  std::vector<float> dinp_ref(N * C);
  dropout_forward(dinp_ref.data(), nullptr, dres.data(), N * C, site);  // the same masks, exactly
  EXPECT_EQ(dinp, dinp_ref);
  for (int64_t i = 0; i < N * C; ++i) EXPECT_EQ(dinp_b[i].bits, to_bf16(dinp[i]).bits);

  for (auto& v : dw) v -= 0.5f;
  for (auto& v : db) v -= 0.5f;
  auto loss = [&] { return test::dot(run_forward(a, b, w, bias, N, C, site).out, r); };
  test::expect_fd(loss, a.data(), dinp.data(), N * C, 1e-3, 2e-3, 1e-2, "dinp");
  test::expect_fd(loss, b.data(), dres.data(), N * C, 1e-3, 2e-3, 1e-2, "dres");
  test::expect_fd(loss, w.data(), dw.data(), C, 1e-3, 2e-3, 1e-2, "dweight");
  test::expect_fd(loss, bias.data(), db.data(), C, 1e-3, 2e-3, 1e-2, "dbias");
}

// Packed rows (row_pos) get the padded layout's rows exactly, with one stream or per-row streams; the
// thread count changes nothing.
TEST(DropoutResidualLayerNorm, PackedRowsDrawThePaddedLayoutsMasks) {
  const int64_t B = 3, T = 11, C = 40;
  const std::vector<int64_t> lens{11, 4, 7};
  auto a = randn(B * T * C, 10), b = randn(B * T * C, 11), w = randn(C, 12), bias = randn(C, 13);
  const std::vector<uint64_t> keys{900, 17, 5};
  for (const bool per_row : {false, true}) {
    DropoutSite site{0.3f, 8, 2, 1ull << 40};
    if (per_row) {
      site.row_streams = keys.data();
      site.row_elems = T * C;
    }
    const Forward padded = run_forward(a, b, w, bias, B * T, C, site);
    std::vector<int64_t> row_pos;
    std::vector<float> pa, pb;
    for (int64_t s = 0; s < B; ++s)
      for (int64_t t = 0; t < lens[s]; ++t) {
        row_pos.push_back(s * T + t);
        pa.insert(pa.end(), a.begin() + (s * T + t) * C, a.begin() + (s * T + t + 1) * C);
        pb.insert(pb.end(), b.begin() + (s * T + t) * C, b.begin() + (s * T + t + 1) * C);
      }
    const int64_t N = static_cast<int64_t>(row_pos.size());
    for (const int threads : {1, 3}) {
      const int saved = omp_get_max_threads();
      omp_set_num_threads(threads);
      const Forward packed = run_forward(pa, pb, w, bias, N, C, site, row_pos.data());
      auto g = randn(N * C, 14);
      std::vector<float> dres = g, dinp(N * C), dw(C, 0.0f), db(C, 0.0f);
      dropout_residual_layernorm_backward(dres.data(), dinp.data(), nullptr, dw.data(), db.data(),
                                          dres.data(), packed.res.data(), w.data(), packed.mean.data(),
                                          packed.rstd.data(), N, C, site, row_pos.data());
      omp_set_num_threads(saved);
      for (int64_t r = 0; r < N; ++r)
        for (int64_t j = 0; j < C; ++j) {
          const int64_t i = r * C + j, pi = row_pos[r] * C + j;
          ASSERT_EQ(packed.res[i], padded.res[pi]) << "per_row " << per_row << " row " << r;
          ASSERT_EQ(packed.out[i], padded.out[pi]) << "per_row " << per_row << " row " << r;
          // The backward's mask is the forward's: a dropped input element has a zero gradient.
          ASSERT_EQ(dinp[i] == 0.0f, packed.res[i] == pb[i]) << "per_row " << per_row << " row " << r;
        }
    }
  }
}

TEST(DropoutResidualLayerNorm, RowStreamsMustCoverWholeRows) {
  const int64_t N = 4, C = 10;
  auto a = randn(N * C, 1), w = randn(C, 2);
  const std::vector<uint64_t> keys{1, 2};
  DropoutSite site{0.1f, 1, 0, 0};
  site.row_streams = keys.data();
  site.row_elems = 15;  // rows of 10 would straddle streams
  EXPECT_THROW(run_forward(a, a, w, w, N, C, site), Error);
}

}  // namespace
}  // namespace ct::kernels

// The disentangled attention bias against transformers' formulation (gathers through [T, T] index matrices,
// p2c through r_pos = bucket(j - i) and a transpose), and its backward by finite differences.
#include "kernels/disentangled_attention.h"

#include "kernels/relative_position.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

struct Case {
  int64_t T = 0;
  int32_t span = 0;
  int64_t bucket_size = 0, max_position = 0;
};

TEST(DisentangledAttention, BiasEqualsTransformersGathers) {
  // Case{60, 64, 64, 40}: buckets step by up to five per distance, so sixteen queries' rows spread past a
  // vector and the block paths fall back to one element at a time.
  for (const Case& c :
       {Case{37, 8, 16, 24}, Case{300, 64, 128, 256}, Case{20, 256, 256, 512}, Case{60, 64, 64, 40}}) {
    const int64_t ld_pos = 2 * c.span + 3, ld_s = c.T + 5;
    const auto c2p = test::randn(c.T * ld_pos, 1), p2c = test::randn(c.T * ld_pos, 2);
    const auto base = test::randn(c.T * ld_s, 3);
    const auto buckets = relative_position_buckets(c.T, c.bucket_size, c.max_position);
    const float inv_scale = 0.125f;
    auto got = base;
    const DisentangledPlan plan = disentangled_plan(buckets.data(), c.T, c.span);
    disentangled_bias_forward(got.data(), ld_s, c2p.data(), p2c.data(), ld_pos, plan, inv_scale, 0, c.T);
    auto want = base;
    for (int64_t i = 0; i < c.T; ++i)
      for (int64_t j = 0; j < c.T; ++j) {
        const int32_t rel = log_bucket_position(i - j, c.bucket_size, c.max_position);
        const int32_t r_pos = log_bucket_position(j - i, c.bucket_size, c.max_position);  // key-to-query
        const double c2p_term = c2p[i * ld_pos + c2p_row(rel, c.span)];
        const double p2c_term = p2c[j * ld_pos + p2c_row(r_pos, c.span)];
        want[i * ld_s + j] =
            static_cast<float>(base[i * ld_s + j] + c2p_term * inv_scale + p2c_term * inv_scale);
      }
    test::expect_close(got, want, 1e-6, 1e-6, "scores + c2p + p2c, T=" + std::to_string(c.T));
    // One term only (pos_att_type ["p2c"]).
    auto p2c_only = base;
    disentangled_bias_forward(p2c_only.data(), ld_s, nullptr, p2c.data(), ld_pos, plan, inv_scale, 0, c.T);
    for (int64_t i = 0; i < c.T; ++i) {
      const int32_t r_pos = log_bucket_position(-i, c.bucket_size, c.max_position);
      EXPECT_NEAR(base[i * ld_s] + p2c[p2c_row(r_pos, c.span)] * inv_scale, p2c_only[i * ld_s], 1e-6);
    }
  }
}

TEST(DisentangledAttention, BackwardIsTheAdjointByFiniteDifferences) {
  const int64_t T = 11, ld_pos = 2 * 4, ld_s = T;
  const int32_t span = 4;
  auto c2p = test::randn(T * ld_pos, 4), p2c = test::randn(T * ld_pos, 5);
  const auto w = test::randn(T * ld_s, 6);
  const auto buckets = relative_position_buckets(T, 8, 16);
  const DisentangledPlan plan = disentangled_plan(buckets.data(), T, span);
  const float inv_scale = 0.3f;
  auto loss = [&] {
    std::vector<float> s(T * ld_s, 0.0f);
    disentangled_bias_forward(s.data(), ld_s, c2p.data(), p2c.data(), ld_pos, plan, inv_scale, 0, T);
    double l = 0;
    for (size_t k = 0; k < s.size(); ++k) l += static_cast<double>(w[k]) * s[k];
    return l;
  };
  std::vector<float> dc2p(T * ld_pos, 0.0f), dp2c(T * ld_pos, 0.0f);
  disentangled_bias_backward(dc2p.data(), dp2c.data(), ld_pos, w.data(), ld_s, plan, inv_scale);
  test::expect_fd(loss, c2p.data(), dc2p.data(), T * ld_pos, 1e-2, 1e-3, 1e-3, "d / d c2p", 88);
  test::expect_fd(loss, p2c.data(), dp2c.data(), T * ld_pos, 1e-2, 1e-3, 1e-3, "d / d p2c", 88);
}

// The backward against its definition summed in double, on shapes with and without stretches (T = 11 has
// none: half of 8 buckets is under a stretch's minimum), and with garbage in the rows' bands beforehand: the
// band is written, not added to; the rest of each row is left alone.
TEST(DisentangledAttention, BackwardWritesTheBandsSums) {
  for (const Case& c : {Case{11, 4, 8, 16}, Case{37, 8, 16, 24}, Case{300, 64, 128, 256},
                        Case{20, 256, 256, 512}, Case{70, 16, 32, 64}, Case{60, 64, 64, 40}}) {
    const int64_t ld_pos = 2 * c.span + 3, ld_s = c.T + 5;
    const auto dscores = test::randn(c.T * ld_s, 10);
    const auto buckets = relative_position_buckets(c.T, c.bucket_size, c.max_position);
    const DisentangledPlan plan = disentangled_plan(buckets.data(), c.T, c.span);
    const float inv_scale = 0.125f;
    const auto before = test::randn(c.T * ld_pos, 11);
    auto dc2p = before, dp2c = before;
    disentangled_bias_backward(dc2p.data(), dp2c.data(), ld_pos, dscores.data(), ld_s, plan, inv_scale);
    std::vector<double> want_c(c.T * ld_pos, 0.0), want_p(c.T * ld_pos, 0.0);
    for (int64_t i = 0; i < c.T; ++i)
      for (int64_t j = 0; j < c.T; ++j) {
        const double g = static_cast<double>(dscores[i * ld_s + j]) * inv_scale;
        want_c[i * ld_pos + c2p_row(log_bucket_position(i - j, c.bucket_size, c.max_position), c.span)] += g;
        want_p[j * ld_pos + p2c_row(log_bucket_position(j - i, c.bucket_size, c.max_position), c.span)] += g;
      }
    for (int64_t r = 0; r < c.T; ++r)
      for (int64_t k = 0; k < ld_pos; ++k) {
        const int64_t e = r * ld_pos + k;
        const bool band = k >= plan.lo && k <= plan.hi;
        EXPECT_NEAR(dc2p[e], band ? want_c[e] : before[e], 1e-5)
            << "dc2p T=" << c.T << " [" << r << ", " << k << "]";
        EXPECT_NEAR(dp2c[e], band ? want_p[e] : before[e], 1e-5)
            << "dp2c T=" << c.T << " [" << r << ", " << k << "]";
      }
  }
}

// The plan's pieces tile the diagonals in order; a stretch steps down one row per key.
TEST(DisentangledAttention, PlanPiecesTileTheDiagonals) {
  for (const Case& c :
       {Case{11, 4, 8, 16}, Case{300, 64, 128, 256}, Case{20, 256, 256, 512}, Case{600, 256, 256, 512}}) {
    const auto buckets = relative_position_buckets(c.T, c.bucket_size, c.max_position);
    const DisentangledPlan p = disentangled_plan(buckets.data(), c.T, c.span);
    const int64_t K = 2 * c.T - 1;
    ASSERT_EQ(static_cast<int64_t>(p.rows.size()), K);
    int64_t next = 0, stretched = 0;
    for (size_t pi = 0; pi < p.piece_start.size(); ++pi) {
      EXPECT_EQ(p.piece_start[pi], next);
      for (int64_t k = p.piece_start[pi]; k < p.piece_start[pi] + p.piece_len[pi]; ++k) {
        EXPECT_EQ(p.piece_of[k], static_cast<int32_t>(pi));
        EXPECT_EQ(p.rows[k], c2p_row(buckets[K - 1 - k], c.span));
        if (p.stretch[pi] && k > p.piece_start[pi]) {
          EXPECT_EQ(p.rows[k], p.rows[k - 1] - 1);
        }
      }
      if (p.stretch[pi]) stretched += p.piece_len[pi];
      next = p.piece_start[pi] + p.piece_len[pi];
    }
    EXPECT_EQ(next, K);
    // Every distance within half the buckets keeps its own row (up to the table's 2 span rows): that much at
    // least is one stretch (T = 11's nine such distances are too few).
    const int64_t near = std::min<int64_t>({K, c.bucket_size + 1, 2 * c.span});
    if (near >= 16) {
      EXPECT_GE(stretched, near) << "T=" << c.T;
    }
  }
}

// The model splits a head's rows over threads in the forward; any split must give the whole-block call's
// bits, so a thread count never changes a DeBERTa loss.
TEST(DisentangledAttention, RowRangesGiveTheWholeBlocksBits) {
  const int64_t T = 45, ld_pos = 2 * 8 + 1, ld_s = T + 3;
  const int32_t span = 8;
  const auto c2p = test::randn(T * ld_pos, 7), p2c = test::randn(T * ld_pos, 8);
  const auto base = test::randn(T * ld_s, 9);
  const auto buckets = relative_position_buckets(T, 16, 32);
  const DisentangledPlan plan = disentangled_plan(buckets.data(), T, span);
  const float inv_scale = 0.2f;
  auto whole = base;
  disentangled_bias_forward(whole.data(), ld_s, c2p.data(), p2c.data(), ld_pos, plan, inv_scale, 0, T);
  for (const int64_t step : {1, 7, 16, 17, 44}) {
    auto split = base;
    for (int64_t k = T; k > 0; k -= step)  // the ranges last to first: order between ranges must not matter
      disentangled_bias_forward(split.data(), ld_s, c2p.data(), p2c.data(), ld_pos, plan, inv_scale,
                                k - step < 0 ? 0 : k - step, k);
    EXPECT_EQ(split, whole) << "ranges of " << step;
  }
}

}  // namespace
}  // namespace ct::kernels

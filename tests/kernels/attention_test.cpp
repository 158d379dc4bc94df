// Attention core: fused-QKV strided layout vs the dense double reference (f32 and bf16), backward vs
// reference and finite differences, HF mask semantics, dropout recomputation.
#include "kernels/attention.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include <omp.h>

#include "core/error.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

constexpr int64_t B = 2, T = 6, NH = 2, HS = 4, H = NH * HS;

struct Fixture {
  std::vector<float> qkv = test::randn(B * T * 3 * H, 1);
  std::vector<float> mask;
  AttentionDims d{B, T, NH, HS, 3 * H, H};
  Fixture() {
    mask.assign(B * T, 1.0f);
    mask[1 * T + 4] = mask[1 * T + 5] = 0.0f;  // second sequence: two padded keys
  }
  // Dense [B, T, H] copy of part p (0 = q, 1 = k, 2 = v).
  std::vector<float> part(int p) const {
    std::vector<float> out(B * T * H);
    for (int64_t r = 0; r < B * T; ++r)
      for (int64_t c = 0; c < H; ++c) out[r * H + c] = qkv[r * 3 * H + p * H + c];
    return out;
  }
};

TEST(Attention, ForwardMatchesReferenceOnFusedQkv) {
  Fixture f;
  for (float p : {0.0f, 0.2f}) {
    DropoutSite drop{p, 11, 3, 100};
    std::vector<float> ctx(B * T * H), probs(B * NH * T * T), ctx_r(B * T * H), probs_r(B * NH * T * T);
    attention_forward(ctx.data(), probs.data(), f.qkv.data(), f.qkv.data() + H, f.qkv.data() + 2 * H,
                      f.mask.data(), f.d, DType::f32, drop);
    auto q = f.part(0), k = f.part(1), v = f.part(2);
    attention_forward_reference(ctx_r.data(), probs_r.data(), q.data(), k.data(), v.data(), f.mask.data(),
                                f.d, drop);
    test::expect_close(ctx, ctx_r, 1e-5, 1e-4, "ctx");
    test::expect_close(probs, probs_r, 1e-6, 1e-4, "probs");
    for (int64_t h = 0; h < NH; ++h)
      for (int64_t i = 0; i < T; ++i) {
        EXPECT_EQ(probs[((1 * NH + h) * T + i) * T + 4], 0.0f);  // masked keys: exactly zero
        EXPECT_EQ(probs[((1 * NH + h) * T + i) * T + 5], 0.0f);
      }
  }
}

TEST(Attention, BackwardMatchesReferenceAndFiniteDifferences) {
  Fixture f;
  DropoutSite drop{0.2f, 5, 7, 0};
  auto r = test::randn(B * T * H, 2);  // loss = sum(ctx * r)
  std::vector<float> ctx(B * T * H), probs(B * NH * T * T);
  auto fwd = [&] {
    attention_forward(ctx.data(), probs.data(), f.qkv.data(), f.qkv.data() + H, f.qkv.data() + 2 * H,
                      f.mask.data(), f.d, DType::f32, drop);
    return test::dot(ctx, r);
  };
  fwd();
  std::vector<float> dqkv(B * T * 3 * H, 1.0f);  // backward ADDS
  attention_backward(dqkv.data(), dqkv.data() + H, dqkv.data() + 2 * H, r.data(), f.qkv.data(),
                     f.qkv.data() + H, f.qkv.data() + 2 * H, probs.data(), f.d, DType::f32, drop);
  for (auto& v : dqkv) v -= 1.0f;
  // Reference on dense copies.
  auto q = f.part(0), k = f.part(1), v = f.part(2);
  std::vector<float> dq(B * T * H), dk(B * T * H), dv(B * T * H);
  attention_backward_reference(dq.data(), dk.data(), dv.data(), r.data(), q.data(), k.data(), v.data(),
                               probs.data(), f.d, drop);
  std::vector<float> fused(B * T * 3 * H);
  for (int64_t row = 0; row < B * T; ++row)
    for (int64_t c = 0; c < H; ++c) {
      fused[row * 3 * H + c] = dq[row * H + c];
      fused[row * 3 * H + H + c] = dk[row * H + c];
      fused[row * 3 * H + 2 * H + c] = dv[row * H + c];
    }
  test::expect_close(dqkv, fused, 1e-5, 1e-4, "dqkv vs reference");
  test::expect_fd(fwd, f.qkv.data(), dqkv.data(), B * T * 3 * H, 1e-2, 2e-3, 1e-2,
                  "dqkv vs finite differences");
}

// ModernBERT's local layers: a band of `window` keys each side, with padding, forward and backward against
// the reference and finite differences; varlen with the same window equals the padded rows.
TEST(Attention, SlidingWindowMatchesReferenceAndFiniteDifferences) {
  Fixture f;
  f.d.window = 1;
  DropoutSite drop{0.0f, 5, 7, 0};
  std::vector<float> ctx(B * T * H), probs(B * NH * T * T), ctx_r(B * T * H), probs_r(B * NH * T * T);
  auto q = f.part(0), k = f.part(1), v = f.part(2);
  attention_forward_reference(ctx_r.data(), probs_r.data(), q.data(), k.data(), v.data(), f.mask.data(), f.d,
                              drop);
  // The loss ignores the padded queries, as every head's does: their rows see no key but padding, so their
  // probabilities saturate and carry no derivative worth checking.
  auto r = test::randn(B * T * H, 4);
  for (int64_t i = 4; i < T; ++i)
    for (int64_t c = 0; c < H; ++c) r[(1 * T + i) * H + c] = 0.0f;
  auto fwd = [&] {
    attention_forward(ctx.data(), probs.data(), f.qkv.data(), f.qkv.data() + H, f.qkv.data() + 2 * H,
                      f.mask.data(), f.d, DType::f32, drop);
    return test::dot(ctx, r);
  };
  fwd();
  test::expect_close(ctx, ctx_r, 1e-5, 1e-4, "windowed ctx");
  test::expect_close(probs, probs_r, 1e-6, 1e-4, "windowed probs");
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j)
      if (std::abs(i - j) > 1) {
        EXPECT_EQ(probs[i * T + j], 0.0f) << i << "," << j;
      }
  std::vector<float> dqkv(B * T * 3 * H, 0.0f);
  attention_backward(dqkv.data(), dqkv.data() + H, dqkv.data() + 2 * H, r.data(), f.qkv.data(),
                     f.qkv.data() + H, f.qkv.data() + 2 * H, probs.data(), f.mask.data(), f.d, DType::f32,
                     drop);
  test::expect_fd(fwd, f.qkv.data(), dqkv.data(), B * T * 3 * H, 1e-2, 2e-3, 1e-2,
                  "windowed dqkv vs finite differences");
  // Varlen: sequence 1 is its first 4 rows (the padded keys dropped); its rows equal the padded ones.
  const int64_t cu[3] = {0, T, T + 4};
  std::vector<float> qkv_v(static_cast<size_t>((T + 4) * 3 * H));
  std::copy(f.qkv.begin(), f.qkv.begin() + (T + 4) * 3 * H, qkv_v.begin());
  std::vector<float> ctx_v((T + 4) * H), probs_v(varlen_probs_elems(cu, B, NH));
  attention_forward_varlen(ctx_v.data(), probs_v.data(), qkv_v.data(), qkv_v.data() + H, qkv_v.data() + 2 * H,
                           cu, f.d, DType::f32, drop);
  for (int64_t i = 0; i < (T + 4) * H; ++i) EXPECT_NEAR(ctx_v[i], ctx[i], 1e-5) << i;
}

TEST(Attention, Bf16OperandsStayCloseToF32) {
  Fixture f;
  for (auto& x : f.qkv) x = round_bf16(x);  // the reference sees exactly the bf16 values
  std::vector<bf16> qkv_bf(f.qkv.size());
  f32_to_bf16(f.qkv.data(), qkv_bf.data(), static_cast<int64_t>(f.qkv.size()));
  DropoutSite drop{0.1f, 1, 2, 3};
  std::vector<bf16> ctx(B * T * H);
  std::vector<float> probs(B * NH * T * T), ctx_r(B * T * H), probs_r(B * NH * T * T);
  attention_forward(ctx.data(), probs.data(), qkv_bf.data(), qkv_bf.data() + H, qkv_bf.data() + 2 * H,
                    f.mask.data(), f.d, DType::bf16, drop);
  auto q = f.part(0), k = f.part(1), v = f.part(2);
  attention_forward_reference(ctx_r.data(), probs_r.data(), q.data(), k.data(), v.data(), f.mask.data(), f.d,
                              drop);
  std::vector<float> ctx_f(ctx.size());
  bf16_to_f32(ctx.data(), ctx_f.data(), static_cast<int64_t>(ctx.size()));
  // Probabilities are rounded to bf16 before the context product: ~3 significant digits.
  test::expect_close(ctx_f, ctx_r, 2e-2, 2e-2, "bf16 ctx");
  test::expect_close(probs, probs_r, 1e-5, 1e-3, "probs (f32 softmax of bf16 products)");
  auto r = test::randn(B * T * H, 3);
  std::vector<float> dqkv(B * T * 3 * H, 0.0f), dq(B * T * H), dk(B * T * H), dv(B * T * H);
  attention_backward(dqkv.data(), dqkv.data() + H, dqkv.data() + 2 * H, r.data(), qkv_bf.data(),
                     qkv_bf.data() + H, qkv_bf.data() + 2 * H, probs.data(), f.d, DType::bf16, drop);
  attention_backward_reference(dq.data(), dk.data(), dv.data(), r.data(), q.data(), k.data(), v.data(),
                               probs_r.data(), f.d, drop);
  for (int64_t row = 0; row < B * T; ++row)
    for (int64_t c = 0; c < H; ++c) {
      EXPECT_NEAR(dqkv[row * 3 * H + c], dq[row * H + c], 3e-2 + 3e-2 * std::fabs(dq[row * H + c]));
      EXPECT_NEAR(dqkv[row * 3 * H + H + c], dk[row * H + c], 3e-2 + 3e-2 * std::fabs(dk[row * H + c]));
      EXPECT_NEAR(dqkv[row * 3 * H + 2 * H + c], dv[row * H + c], 3e-2 + 3e-2 * std::fabs(dv[row * H + c]));
    }
}

// Dense [rows, h] copies of the q, k and v parts of fused [rows, 3h] QKV rows.
std::array<std::vector<float>, 3> split_qkv(const std::vector<float>& qkv, int64_t rows, int64_t h) {
  std::array<std::vector<float>, 3> out;
  for (int p = 0; p < 3; ++p) {
    out[p].resize(static_cast<size_t>(rows * h));
    for (int64_t r = 0; r < rows; ++r) std::copy_n(qkv.data() + r * 3 * h + p * h, h, out[p].data() + r * h);
  }
  return out;
}

TEST(Attention, SkippedPaddedKeysGiveTheSameResultAsTheFullComputation) {
  // T above the 32-key quantum; sequences padded to different lengths (one with a hole inside).
  constexpr int64_t b = 3, t = 70, nh = 2, hs = 4, h = nh * hs;
  AttentionDims d{b, t, nh, hs, 3 * h, h};
  auto qkv = test::randn(b * t * 3 * h, 21);
  std::vector<float> mask(b * t, 1.0f);
  for (int64_t j = 20; j < t; ++j) mask[1 * t + j] = 0.0f;  // 20 keys -> one 32-key block
  for (int64_t j = 45; j < t; ++j) mask[2 * t + j] = 0.0f;  // 45 keys -> 64
  mask[2 * t + 7] = 0.0f;
  const auto [q, k, v] = split_qkv(qkv, b * t, h);
  for (float p : {0.0f, 0.3f}) {
    DropoutSite drop{p, 9, 4, 1000};
    std::vector<float> ctx(b * t * h), probs(b * nh * t * t, 7.0f), ctx_r(b * t * h), probs_r(b * nh * t * t);
    attention_forward(ctx.data(), probs.data(), qkv.data(), qkv.data() + h, qkv.data() + 2 * h, mask.data(),
                      d, DType::f32, drop);
    attention_forward_reference(ctx_r.data(), probs_r.data(), q.data(), k.data(), v.data(), mask.data(), d,
                                drop);
    test::expect_close(ctx, ctx_r, 1e-5, 1e-4, "ctx");
    test::expect_close(probs, probs_r, 1e-6, 1e-4, "probs (skipped keys written as zeros)");
    auto r = test::randn(b * t * h, 22);
    std::vector<float> dq(b * t * h), dk(b * t * h), dv(b * t * h);
    attention_backward_reference(dq.data(), dk.data(), dv.data(), r.data(), q.data(), k.data(), v.data(),
                                 probs_r.data(), d, drop);
    for (const float* m : std::vector<const float*>{mask.data(), nullptr}) {
      std::vector<float> dqkv(b * t * 3 * h, 0.0f);
      attention_backward(dqkv.data(), dqkv.data() + h, dqkv.data() + 2 * h, r.data(), qkv.data(),
                         qkv.data() + h, qkv.data() + 2 * h, probs.data(), m, d, DType::f32, drop);
      for (int64_t row = 0; row < b * t; ++row)
        for (int64_t c = 0; c < h; ++c) {
          EXPECT_NEAR(dqkv[row * 3 * h + c], dq[row * h + c], 1e-5 + 1e-4 * std::fabs(dq[row * h + c]));
          EXPECT_NEAR(dqkv[row * 3 * h + h + c], dk[row * h + c], 1e-5 + 1e-4 * std::fabs(dk[row * h + c]));
          EXPECT_NEAR(dqkv[row * 3 * h + 2 * h + c], dv[row * h + c],
                      1e-5 + 1e-4 * std::fabs(dv[row * h + c]));
        }
    }
  }
}

// Packed sequences: each attends over its own rows, with the padded layout's dropout counters (drop_T), so
// real rows equal the masked padded computation's (forward with dropout, and backward with zero gradient on
// pad rows), whether dropout draws one stream or one stream per sequence.
TEST(Attention, VarlenEqualsTheMaskedPaddedComputationOnRealRows) {
  constexpr int64_t b = 3, t = 40, nh = 2, hs = 4, h = nh * hs;
  const std::vector<int64_t> lens = {40, 13, 33};
  const std::vector<int64_t> cu = {0, 40, 53, 86};
  AttentionDims d{b, t, nh, hs, 3 * h, h};
  auto qkv = test::randn(b * t * 3 * h, 31);
  std::vector<float> mask(b * t, 0.0f);
  std::vector<int64_t> real;  // padded row of each packed row
  for (int64_t s = 0; s < b; ++s)
    for (int64_t j = 0; j < lens[s]; ++j) mask[s * t + j] = 1.0f, real.push_back(s * t + j);
  const int64_t n = cu[b];
  std::vector<float> packed(n * 3 * h);
  for (int64_t r = 0; r < n; ++r) std::copy_n(qkv.data() + real[r] * 3 * h, 3 * h, packed.data() + r * 3 * h);
  auto dctx = test::randn(b * t * h, 32);
  for (int64_t r = 0; r < b * t; ++r)
    if (mask[r] == 0.0f) std::fill_n(dctx.data() + r * h, h, 0.0f);  // pads feed no loss
  std::vector<float> dctx_packed(n * h);
  for (int64_t r = 0; r < n; ++r) std::copy_n(dctx.data() + real[r] * h, h, dctx_packed.data() + r * h);
  const uint64_t streams[b] = {11, 12, 13};
  for (int mode = 0; mode < 3; ++mode) {
    DropoutSite drop{mode == 0 ? 0.0f : 0.3f, 9, 4, 1000};
    if (mode == 2) drop.row_streams = streams, drop.row_elems = nh * t * t;
    std::vector<float> ctx(b * t * h), probs(b * nh * t * t);
    attention_forward(ctx.data(), probs.data(), qkv.data(), qkv.data() + h, qkv.data() + 2 * h, mask.data(),
                      d, DType::f32, drop);
    ASSERT_EQ(varlen_probs_elems(cu.data(), b, nh), nh * (40 * 40 + 13 * 13 + 33 * 33));
    std::vector<float> vctx(n * h), vprobs(varlen_probs_elems(cu.data(), b, nh));
    attention_forward_varlen(vctx.data(), vprobs.data(), packed.data(), packed.data() + h,
                             packed.data() + 2 * h, cu.data(), d, DType::f32, drop);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < h; ++c)
        ASSERT_NEAR(vctx[r * h + c], ctx[real[r] * h + c], 1e-5) << "mode " << mode << " row " << r;
    int64_t p0 = 0;
    for (int64_t s = 0; s < b; ++s) {
      const int64_t L = lens[s];
      for (int64_t hh = 0; hh < nh; ++hh)
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < L; ++j)
            ASSERT_NEAR(vprobs[p0 + (hh * L + i) * L + j], probs[((s * nh + hh) * t + i) * t + j], 1e-6);
      p0 += nh * L * L;
    }
    std::vector<float> dqkv(b * t * 3 * h, 0.0f), vdqkv(n * 3 * h, 0.0f);
    attention_backward(dqkv.data(), dqkv.data() + h, dqkv.data() + 2 * h, dctx.data(), qkv.data(),
                       qkv.data() + h, qkv.data() + 2 * h, probs.data(), mask.data(), d, DType::f32, drop);
    attention_backward_varlen(vdqkv.data(), vdqkv.data() + h, vdqkv.data() + 2 * h, dctx_packed.data(),
                              packed.data(), packed.data() + h, packed.data() + 2 * h, vprobs.data(),
                              cu.data(), d, DType::f32, drop);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < 3 * h; ++c)
        ASSERT_NEAR(vdqkv[r * 3 * h + c], dqkv[real[r] * 3 * h + c],
                    1e-5 + 1e-4 * std::fabs(dqkv[real[r] * 3 * h + c]))
            << "mode " << mode << " row " << r << " col " << c;
  }
  // A sequence longer than the padded length it replaces is refused.
  const std::vector<int64_t> bad = {0, 41};
  AttentionDims one{1, t, nh, hs, 3 * h, h};
  std::vector<float> buf(41 * 3 * h), out(41 * h), pr(nh * 41 * 41);
  EXPECT_THROW(attention_forward_varlen(out.data(), pr.data(), buf.data(), buf.data() + h, buf.data() + 2 * h,
                                        bad.data(), one, DType::f32, DropoutSite{}),
               Error);
}

// Random fused QKV rows [rows, 3h] in the operand type dt (f32 bytes, or bf16 rounded from them).
std::vector<char> random_qkv(DType dt, int64_t rows, int64_t h, uint64_t seed) {
  auto f = test::randn(rows * 3 * h, seed);
  std::vector<char> out(static_cast<size_t>(rows * 3 * h * dtype_size(dt)));
  if (dt == DType::f32)
    std::memcpy(out.data(), f.data(), out.size());
  else
    f32_to_bf16(f.data(), reinterpret_cast<bf16*>(out.data()), rows * 3 * h);
  return out;
}

// Three sequences of up to 40 tokens, padded (sequence 1 has 13 real keys: one 32-key block, 8 skipped) or
// packed (lengths 40, 13, 33).
struct ThreeSequences {
  static constexpr int64_t b = 3, t = 40, nh = 2, hs = 4, h = nh * hs;
  const std::vector<int64_t> cu = {0, 40, 53, 86};
  AttentionDims d{b, t, nh, hs, 3 * h, h};
  std::vector<float> mask = std::vector<float>(b * t, 1.0f);
  ThreeSequences() {
    for (int64_t j = 13; j < t; ++j) mask[1 * t + j] = 0.0f;
  }
};

// Forward's dropped probabilities kept in the caller's buffer (saved_pd) give backward bit for bit what the
// recomputation gives, f32 and bf16, padded (with skipped keys past the mask, where the buffer holds NaN that
// nothing may read) and packed. The buffer starts as NaN, so a read of anything forward did not write shows.
TEST(Attention, SavedDroppedProbsGiveTheRecomputedGradientsBitForBit) {
  ThreeSequences x;
  constexpr int64_t b = ThreeSequences::b, t = ThreeSequences::t, nh = ThreeSequences::nh,
                    h = ThreeSequences::h;
  const std::vector<int64_t>& cu = x.cu;
  const AttentionDims& d = x.d;
  const std::vector<float>& mask = x.mask;
  for (DType dt : {DType::f32, DType::bf16}) {
    for (bool packed : {false, true}) {
      const int64_t rows = packed ? cu[b] : b * t;
      const int64_t n_probs = packed ? varlen_probs_elems(cu.data(), b, nh) : b * nh * t * t;
      const int64_t es = dtype_size(dt);
      const std::vector<char> qkv = random_qkv(dt, rows, h, 41);
      const char* q = qkv.data();
      const char* k = q + h * es;
      const char* v = q + 2 * h * es;
      auto dctx = test::randn(rows * h, 42);
      DropoutSite drop{0.3f, 9, 4, 1000};
      std::vector<float> grads[2];
      for (int saved = 0; saved < 2; ++saved) {
        std::vector<char> ctx(static_cast<size_t>(rows * h * es));
        std::vector<float> probs(static_cast<size_t>(n_probs));
        std::vector<char> pd(static_cast<size_t>(n_probs * es), static_cast<char>(0xff));  // NaN either way
        void* spd = saved ? pd.data() : nullptr;
        std::vector<float>& g = grads[saved];
        g.assign(static_cast<size_t>(rows * 3 * h), 0.0f);
        if (packed) {
          attention_forward_varlen(ctx.data(), probs.data(), q, k, v, cu.data(), d, dt, drop, spd);
          attention_backward_varlen(g.data(), g.data() + h, g.data() + 2 * h, dctx.data(), q, k, v,
                                    probs.data(), cu.data(), d, dt, drop, spd);
        } else {
          attention_forward(ctx.data(), probs.data(), q, k, v, mask.data(), d, dt, drop, spd);
          attention_backward(g.data(), g.data() + h, g.data() + 2 * h, dctx.data(), q, k, v, probs.data(),
                             mask.data(), d, dt, drop, spd);
        }
      }
      for (size_t i = 0; i < grads[0].size(); ++i) {
        ASSERT_FALSE(std::isnan(grads[1][i]))
            << dtype_name(dt) << (packed ? " packed" : " padded") << " " << i;
        ASSERT_EQ(grads[1][i], grads[0][i]) << dtype_name(dt) << (packed ? " packed" : " padded") << " " << i;
      }
    }
  }
}

// The query-rows forms equal the full forms' rows for the same queries: forward (context and probabilities)
// and backward with a context gradient on those rows only (what a head that reads them sends back), f32 and
// bf16, padded with skipped keys and packed, dropout off, on, and with per-sequence streams; for each
// sequence's first row (classification) and for scattered rows, several in one sequence and one at a padded
// position (a masked LM's).
TEST(Attention, QueryRowsFormsEqualTheFullFormsRows) {
  ThreeSequences x;
  constexpr int64_t b = ThreeSequences::b, t = ThreeSequences::t, nh = ThreeSequences::nh,
                    h = ThreeSequences::h;
  const std::vector<int64_t>& cu = x.cu;
  const AttentionDims& d = x.d;
  x.mask[2 * t + 5] = 0.0f;  // a hole
  const std::vector<float>& mask = x.mask;
  const uint64_t streams[b] = {11, 12, 13};
  // (sequence, position) pairs
  const std::vector<std::vector<std::pair<int64_t, int64_t>>> sets = {
      {{0, 0}, {1, 0}, {2, 0}}, {{0, 3}, {0, 17}, {0, 39}, {1, 12}, {2, 0}, {2, 5}, {2, 32}}};
  for (DType dt : {DType::f32, DType::bf16})
    for (bool packed : {false, true})
      for (int mode = 0; mode < 3; ++mode)
        for (size_t set = 0; set < sets.size(); ++set) {
          SCOPED_TRACE(std::string(dtype_name(dt)) + (packed ? " packed" : " padded") + " mode " +
                       std::to_string(mode) + " set " + std::to_string(set));
          DropoutSite drop{mode == 0 ? 0.0f : 0.3f, 9, 4, 1000};
          if (mode == 2) drop.row_streams = streams, drop.row_elems = nh * t * t;
          const int64_t n_tok = packed ? cu[b] : b * t;
          std::vector<int64_t> sel;
          for (auto [s, i] : sets[set]) sel.push_back((packed ? cu[s] : s * t) + i);
          if (!packed) sel.push_back(1 * t + 20);  // a query at a padded position (computed all the same)
          std::sort(sel.begin(), sel.end());
          const int64_t R = static_cast<int64_t>(sel.size());
          auto seq_of = [&](int64_t row) {
            int64_t s = 0;
            while (row >= (packed ? cu[s + 1] : (s + 1) * t)) ++s;
            return s;
          };
          const int64_t es = dtype_size(dt);
          const std::vector<char> qkv = random_qkv(dt, n_tok, h, 51);
          const char* q = qkv.data();
          const char* k = q + h * es;
          const char* v = q + 2 * h * es;
          const float* m = packed ? nullptr : mask.data();
          // Full forms.
          const int64_t n_probs = packed ? varlen_probs_elems(cu.data(), b, nh) : b * nh * t * t;
          std::vector<char> ctx(static_cast<size_t>(n_tok * h * es));
          std::vector<float> probs(static_cast<size_t>(n_probs));
          if (packed)
            attention_forward_varlen(ctx.data(), probs.data(), q, k, v, cu.data(), d, dt, drop);
          else
            attention_forward(ctx.data(), probs.data(), q, k, v, m, d, dt, drop);
          // Query-rows forms.
          std::vector<char> ctx1(static_cast<size_t>(R * h * es));
          std::vector<float> probs1(static_cast<size_t>(R * nh * t), 7.0f);
          attention_rows_forward(ctx1.data(), probs1.data(), q, k, v, m, packed ? cu.data() : nullptr,
                                 sel.data(), R, d, dt, drop);
          auto as_f32 = [&](const char* p, int64_t i) {
            return dt == DType::f32 ? reinterpret_cast<const float*>(p)[i]
                                    : to_f32(reinterpret_cast<const bf16*>(p)[i]);
          };
          const double tol = dt == DType::f32 ? 1e-5 : 2e-2;
          for (int64_t n = 0; n < R; ++n) {
            const int64_t s = seq_of(sel[n]);
            const int64_t row0 = packed ? cu[s] : s * t, L = packed ? cu[s + 1] - cu[s] : t;
            const int64_t i = sel[n] - row0;
            const int64_t p0 =
                packed ? nh * (s == 0 ? 0 : (s == 1 ? 40 * 40 : 40 * 40 + 13 * 13)) : s * nh * t * t;
            for (int64_t c = 0; c < h; ++c)
              ASSERT_NEAR(as_f32(ctx1.data(), n * h + c), as_f32(ctx.data(), sel[n] * h + c),
                          tol * (1 + std::fabs(as_f32(ctx.data(), sel[n] * h + c))))
                  << "ctx row " << sel[n] << " col " << c;
            for (int64_t hh = 0; hh < nh; ++hh)
              for (int64_t j = 0; j < t; ++j) {
                const float want = j < L ? probs[p0 + (hh * L + i) * L + j] : 0.0f;
                ASSERT_NEAR(probs1[(n * nh + hh) * t + j], want, 1e-6)
                    << "probs row " << sel[n] << " key " << j;
              }
          }
          // Backward with a gradient on the selected rows only.
          auto g = test::randn(R * h, 52);
          std::vector<float> dctx(static_cast<size_t>(n_tok * h), 0.0f);
          for (int64_t n = 0; n < R; ++n) std::copy_n(g.data() + n * h, h, dctx.data() + sel[n] * h);
          std::vector<float> full(static_cast<size_t>(n_tok * 3 * h), 0.0f), one(full.size(), 0.0f);
          if (packed)
            attention_backward_varlen(full.data(), full.data() + h, full.data() + 2 * h, dctx.data(), q, k, v,
                                      probs.data(), cu.data(), d, dt, drop);
          else
            attention_backward(full.data(), full.data() + h, full.data() + 2 * h, dctx.data(), q, k, v,
                               probs.data(), m, d, dt, drop);
          attention_rows_backward(one.data(), one.data() + h, one.data() + 2 * h, g.data(), q, k, v,
                                  probs1.data(), m, packed ? cu.data() : nullptr, sel.data(), R, d, dt, drop);
          // bf16: dS is rounded to bf16 on both sides from f32 sums taken in another order (oneDNN's kernel
          // for this ISA against the loop), so a rounding may land one bf16 ulp (2^-8) apart: the bound is a
          // few such ulps of the largest gradient. f32: the order of the sums alone.
          double scale = 0;
          for (float x : full) scale = std::max(scale, static_cast<double>(std::fabs(x)));
          for (size_t i = 0; i < full.size(); ++i)
            ASSERT_NEAR(one[i], full[i], dt == DType::bf16 ? 2e-2 * scale : 1e-5 + 1e-4 * std::fabs(full[i]))
                << "dqkv " << i;
        }
  // Rows out of order or outside the batch are refused.
  std::vector<char> buf(static_cast<size_t>(b * t * 3 * h * 4));
  std::vector<float> out(static_cast<size_t>(4 * nh * t));
  const std::vector<int64_t> unordered = {5, 2}, outside = {b * t};
  EXPECT_THROW(attention_rows_forward(out.data(), out.data(), buf.data(), buf.data(), buf.data(), nullptr,
                                      nullptr, unordered.data(), 2, d, DType::f32, DropoutSite{}),
               Error);
  EXPECT_THROW(attention_rows_forward(out.data(), out.data(), buf.data(), buf.data(), buf.data(), nullptr,
                                      nullptr, outside.data(), 1, d, DType::f32, DropoutSite{}),
               Error);
}

TEST(Attention, FullyMaskedSequenceAttendsUniformlyLikeHf) {
  Fixture f;
  std::fill(f.mask.begin() + T, f.mask.end(), 0.0f);
  std::vector<float> ctx(B * T * H), probs(B * NH * T * T);
  attention_forward(ctx.data(), probs.data(), f.qkv.data(), f.qkv.data() + H, f.qkv.data() + 2 * H,
                    f.mask.data(), f.d, DType::f32, DropoutSite{});
  for (int64_t i = NH * T * T; i < B * NH * T * T; ++i) EXPECT_FLOAT_EQ(probs[i], 1.0f / T);
}

// The per-(sequence, head) tasks group a sequence's heads while their scores stay small: every head alone at
// T = 260 (its [T, T] scores exceed a task's budget), two and then one at T = 150 (three heads), all three at
// T = 40. Each matches the reference (padded keys skipped on one sequence, dropout on), and since every
// product runs whole on one thread, 2 and 3 threads give the same bits, f32 and bf16, padded and packed. (Not
// 1: a team of one is no parallel region, and oneDNN's AVX2 matmul then splits a product by the thread count
// its primitive was created under.)
TEST(Attention, HeadTasksOfEverySizeMatchTheReferenceAtAnyThreadCount) {
  constexpr int64_t b = 2, nh = 3, hs = 8, h = nh * hs;
  for (int64_t t : {260, 150, 40}) {
    SCOPED_TRACE("T = " + std::to_string(t));
    AttentionDims d{b, t, nh, hs, 3 * h, h};
    auto qkv = test::randn(b * t * 3 * h, 41 + t);
    std::vector<float> mask(b * t, 1.0f);
    for (int64_t j = t / 3; j < t; ++j) mask[1 * t + j] = 0.0f;
    const auto [q, k, v] = split_qkv(qkv, b * t, h);
    const DropoutSite drop{0.2f, 13, 2, 500};
    std::vector<float> ctx(b * t * h), probs(b * nh * t * t), ctx_r(b * t * h), probs_r(b * nh * t * t);
    attention_forward(ctx.data(), probs.data(), qkv.data(), qkv.data() + h, qkv.data() + 2 * h, mask.data(),
                      d, DType::f32, drop);
    attention_forward_reference(ctx_r.data(), probs_r.data(), q.data(), k.data(), v.data(), mask.data(), d,
                                drop);
    test::expect_close(ctx, ctx_r, 1e-5, 1e-4, "ctx");
    test::expect_close(probs, probs_r, 1e-6, 1e-4, "probs");
    auto r = test::randn(b * t * h, 43 + t);
    std::vector<float> dq(b * t * h), dk(b * t * h), dv(b * t * h), dqkv(b * t * 3 * h, 0.0f);
    attention_backward_reference(dq.data(), dk.data(), dv.data(), r.data(), q.data(), k.data(), v.data(),
                                 probs_r.data(), d, drop);
    attention_backward(dqkv.data(), dqkv.data() + h, dqkv.data() + 2 * h, r.data(), qkv.data(),
                       qkv.data() + h, qkv.data() + 2 * h, probs.data(), mask.data(), d, DType::f32, drop);
    for (int64_t row = 0; row < b * t; ++row)
      for (int64_t c = 0; c < h; ++c) {
        ASSERT_NEAR(dqkv[row * 3 * h + c], dq[row * h + c], 1e-5 + 1e-4 * std::fabs(dq[row * h + c]));
        ASSERT_NEAR(dqkv[row * 3 * h + h + c], dk[row * h + c], 1e-5 + 1e-4 * std::fabs(dk[row * h + c]));
        ASSERT_NEAR(dqkv[row * 3 * h + 2 * h + c], dv[row * h + c], 1e-5 + 1e-4 * std::fabs(dv[row * h + c]));
      }
    // Thread-count invariance, bit for bit.
    const std::vector<int64_t> cu = {0, t, t + t / 3};
    for (DType dt : {DType::f32, DType::bf16})
      for (bool packed : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + (packed ? " packed" : " padded"));
        const int64_t rows = packed ? cu[2] : b * t;
        auto x = random_qkv(dt, rows, h, 47);
        const size_t es = static_cast<size_t>(dtype_size(dt));
        const void* xq = x.data();
        const void* xk = x.data() + h * es;
        const void* xv = x.data() + 2 * h * es;
        const int64_t np = packed ? varlen_probs_elems(cu.data(), b, nh) : b * nh * t * t;
        auto dout = test::randn(rows * h, 48);
        auto run = [&](int threads) {
          const int saved = omp_get_max_threads();
          omp_set_num_threads(threads);
          std::vector<char> out(static_cast<size_t>(rows * h) * es);
          std::vector<float> pr(np), grad(rows * 3 * h, 0.0f);
          if (packed) {
            attention_forward_varlen(out.data(), pr.data(), xq, xk, xv, cu.data(), d, dt, drop);
            attention_backward_varlen(grad.data(), grad.data() + h, grad.data() + 2 * h, dout.data(), xq, xk,
                                      xv, pr.data(), cu.data(), d, dt, drop);
          } else {
            attention_forward(out.data(), pr.data(), xq, xk, xv, mask.data(), d, dt, drop);
            attention_backward(grad.data(), grad.data() + h, grad.data() + 2 * h, dout.data(), xq, xk, xv,
                               pr.data(), mask.data(), d, dt, drop);
          }
          omp_set_num_threads(saved);
          std::vector<char> all(out);
          all.insert(all.end(), reinterpret_cast<const char*>(pr.data()),
                     reinterpret_cast<const char*>(pr.data() + pr.size()));
          all.insert(all.end(), reinterpret_cast<const char*>(grad.data()),
                     reinterpret_cast<const char*>(grad.data() + grad.size()));
          return all;
        };
        const auto two = run(2), three = run(3);
        ASSERT_EQ(two.size(), three.size());
        // Where they differ, if they do: the output, the probabilities or the gradients, and the first byte.
        const size_t out_bytes = static_cast<size_t>(rows * h) * es, probs_bytes = sizeof(float) * np;
        size_t first = two.size();
        for (size_t i = 0; i < two.size() && first == two.size(); ++i)
          if (two[i] != three[i]) first = i;
        const char* part = first < out_bytes                 ? "output"
                           : first < out_bytes + probs_bytes ? "probabilities"
                                                             : "gradients";
        EXPECT_EQ(first, two.size()) << "2 and 3 threads differ, first in the " << part << " at byte "
                                     << first;
      }
  }
}

TEST(Attention, BadDimsThrow) {
  std::vector<float> buf(1024);
  AttentionDims d{1, 2, 2, 4, 4, 0};  // ld_qkv smaller than NH*HS
  EXPECT_THROW(attention_forward(buf.data(), buf.data(), buf.data(), buf.data(), buf.data(), nullptr, d,
                                 DType::f32, DropoutSite{}),
               Error);
  AttentionDims z{0, 2, 2, 4, 0, 0};
  EXPECT_THROW(attention_forward(buf.data(), buf.data(), buf.data(), buf.data(), buf.data(), nullptr, z,
                                 DType::f32, DropoutSite{}),
               Error);
}

}  // namespace
}  // namespace ct::kernels

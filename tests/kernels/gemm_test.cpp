// gemm (oneDNN) against gemm_reference over layouts, batching, dtypes, alpha, accumulate and bias.
#include "kernels/gemm.h"

#include <thread>

#include "core/error.h"
#include "kernels/linear.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

using test::expect_close;
using test::randn;

std::vector<uint16_t> to_bf(const std::vector<float>& v) {
  std::vector<uint16_t> o(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = f32_to_bf16_bits(v[i]);
  return o;
}

struct Case {
  Gemm g;
  int64_t a_elems, b_elems, c_elems;
};

void run_case(const Gemm& g, int64_t a_elems, int64_t b_elems, int64_t c_elems, double tol,
              const std::string& what) {
  auto a = randn(a_elems, 1), b = randn(b_elems, 2), c0 = randn(c_elems, 3);
  std::vector<float> bias = randn(g.N, 4);
  Gemm gg = g;
  if (g.bias) gg.bias = bias.data();
  std::vector<uint16_t> abf = to_bf(a), bbf = to_bf(b);
  const void* ap = g.a_type == DType::f32 ? static_cast<const void*>(a.data()) : abf.data();
  const void* bp = g.b_type == DType::f32 ? static_cast<const void*>(b.data()) : bbf.data();
  if (g.c_type == DType::f32) {
    std::vector<float> got = c0, want = c0;
    gemm(gg, ap, bp, got.data());
    gemm_reference(gg, ap, bp, want.data());
    expect_close(got, want, tol, tol, what);
  } else {
    std::vector<uint16_t> got = to_bf(c0), want = to_bf(c0);
    gemm(gg, ap, bp, got.data());
    gemm_reference(gg, ap, bp, want.data());
    std::vector<float> gf(got.size()), wf(want.size());
    for (size_t i = 0; i < got.size(); ++i)
      gf[i] = bf16_bits_to_f32(got[i]), wf[i] = bf16_bits_to_f32(want[i]);
    expect_close(gf, wf, 0.05, 0.02, what);
  }
}

TEST(Gemm, DensePlainAndTransposedMatchReference) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Gemm g;
      g.M = 17;
      g.N = 23;
      g.K = 31;
      g.trans_a = ta;
      g.trans_b = tb;
      run_case(g, 17 * 31, 23 * 31, 17 * 23, 1e-4,
               std::string("ta=") + (ta ? "1" : "0") + " tb=" + (tb ? "1" : "0"));
    }
}

// B rows 12 KiB apart (BERT-base's FFN width) are multiplied from a padded copy on AVX-512
// (kernels/gemm.cpp): the result, its accumulate and bias, a narrower N within a wide ldb, and a transposed A
// (the weight gradient) are the product's. On other ISAs the same cases take the plain path.
TEST(Gemm, BRowsAMultipleOf4KiBApartMatchReference) {
  for (bool ta : {false, true})
    for (bool acc : {false, true}) {
      Gemm g;
      g.M = 70;
      g.K = 33;
      g.N = 3072;
      g.trans_a = ta;
      g.accumulate = acc;
      run_case(g, 70 * 33, 33 * 3072, 70 * 3072, 1e-4,
               std::string("ta=") + (ta ? "1" : "0") + " acc=" + (acc ? "1" : "0"));
    }
  Gemm w;  // 1000 of 3072 columns: ldb stays 12 KiB, C is [M, 1000]
  w.M = 40;
  w.K = 20;
  w.N = 1000;
  w.ldb = 3072;
  w.bias = reinterpret_cast<const float*>(1);  // replaced by real data in run_case
  run_case(w, 40 * 20, 20 * 3072, 40 * 1000, 1e-4, "ldb=3072 N=1000 bias");
}

TEST(Gemm, AlphaAccumulateAndBias) {
  Gemm g;
  g.M = 9;
  g.N = 12;
  g.K = 7;
  g.alpha = 0.25f;
  g.accumulate = true;
  run_case(g, 9 * 7, 7 * 12, 9 * 12, 1e-4, "alpha+accumulate");
  Gemm h;
  h.M = 9;
  h.N = 12;
  h.K = 7;
  h.trans_b = true;
  h.bias = reinterpret_cast<const float*>(1);  // replaced by real data in run_case
  run_case(h, 9 * 7, 12 * 7, 9 * 12, 1e-4, "bias");
  h.accumulate = true;
  run_case(h, 9 * 7, 12 * 7, 9 * 12, 1e-4, "bias+accumulate");
}

TEST(Gemm, StridedRowsAndTwoBatchDimsLikeAttention) {
  // Q K^T per (b, h) on [B, T, 3H] fused rows: row stride 3H, head stride HS, sequence stride T*3H.
  const int64_t B = 2, T = 5, NH = 3, HS = 4, H = NH * HS;
  Gemm g;
  g.batch_outer = B;
  g.batch = NH;
  g.M = T;
  g.N = T;
  g.K = HS;
  g.trans_b = true;
  g.lda = g.ldb = 3 * H;
  g.stride_a = g.stride_b = HS;
  g.outer_stride_a = g.outer_stride_b = T * 3 * H;
  g.ldc = T;
  g.stride_c = T * T;
  g.outer_stride_c = NH * T * T;
  g.alpha = 0.5f;
  run_case(g, B * T * 3 * H, B * T * 3 * H, B * NH * T * T, 1e-4, "attention scores");
  // P V into [B, T, H] with a padded row stride.
  Gemm h;
  h.batch_outer = B;
  h.batch = NH;
  h.M = T;
  h.N = HS;
  h.K = T;
  h.lda = T;
  h.stride_a = T * T;
  h.outer_stride_a = NH * T * T;
  h.ldb = 3 * H;
  h.stride_b = HS;
  h.outer_stride_b = T * 3 * H;
  h.ldc = H + 3;
  h.stride_c = HS;
  h.outer_stride_c = T * (H + 3);
  h.accumulate = true;
  run_case(h, B * NH * T * T, B * T * 3 * H, B * T * (H + 3), 1e-4, "context");
}

// bf16 operands whose per-head matrices interleave in [B, T, 3H] rows are copied into dense matrices before
// oneDNN sees them (kernels/gemm.cpp): plain, transposed (K in Q K^T, Q in dK = dS^T Q's B) and transposed-A
// interleaved operands, with alpha and accumulate, against the reference. Where oneDNN has no bf16 matmul the
// same products run widened.
TEST(Gemm, Bf16InterleavedHeadOperandsMatchReference) {
  const int64_t B = 2, T = 37, NH = 3, HS = 8, H = NH * HS;
  for (bool tb : {false, true}) {
    Gemm g;  // Q K^T (tb) or Q K' with K' stored [HS, T] per head
    g.batch_outer = B;
    g.batch = NH;
    g.M = T;
    g.N = T;
    g.K = HS;
    g.trans_b = tb;
    g.a_type = g.b_type = DType::bf16;
    g.lda = g.ldb = 3 * H;
    g.stride_a = g.stride_b = HS;
    g.outer_stride_a = g.outer_stride_b = T * 3 * H;
    if (!tb) {  // B stored [HS, T] per head, heads side by side in rows of NH * T
      g.ldb = NH * T;
      g.stride_b = T;
      g.outer_stride_b = HS * NH * T;
    }
    g.ldc = T;
    g.stride_c = T * T;
    g.outer_stride_c = NH * T * T;
    g.alpha = 0.125f;
    run_case(g, B * T * 3 * H, B * T * 3 * H, B * NH * T * T, 2e-3, tb ? "scores, K^T" : "scores, K'");
  }
  Gemm h;  // dK += dS^T Q: A dense [T, T] per head, transposed; B interleaved rows
  h.batch_outer = B;
  h.batch = NH;
  h.M = T;
  h.N = HS;
  h.K = T;
  h.trans_a = true;
  h.a_type = h.b_type = DType::bf16;
  h.lda = T;
  h.stride_a = T * T;
  h.outer_stride_a = NH * T * T;
  h.ldb = 3 * H;
  h.stride_b = HS;
  h.outer_stride_b = T * 3 * H;
  h.ldc = 3 * H;
  h.stride_c = HS;
  h.outer_stride_c = T * 3 * H;
  h.accumulate = true;
  run_case(h, B * NH * T * T, B * T * 3 * H, B * T * 3 * H, 2e-3, "dK");
  Gemm t = h;  // A interleaved and transposed: stored [K, M] = [T, HS] rows of a [B, T, 3H] buffer
  t.M = HS;
  t.N = HS;
  t.K = T;
  t.lda = 3 * H;
  t.stride_a = HS;
  t.outer_stride_a = T * 3 * H;
  t.ldc = HS;
  t.stride_c = HS * HS;
  t.outer_stride_c = NH * HS * HS;
  run_case(t, B * T * 3 * H, B * T * 3 * H, B * NH * HS * HS, 2e-3, "A^T interleaved");
}

TEST(Gemm, DenseBatchDefaults) {
  Gemm g;
  g.batch = 3;
  g.M = 4;
  g.N = 6;
  g.K = 5;
  run_case(g, 3 * 4 * 5, 3 * 5 * 6, 3 * 4 * 6, 1e-4, "batch 3");
}

// Bias then activation on C in the same pass, as inference runs a Linear + GELU: every activation, f32 and
// bf16 operands and outputs, a row count past a multiple of 64 (the row tail carries the activation) and a
// reduction that is not a multiple of 64 (never split: the activation must see the whole sum).
TEST(Gemm, ActivationEpilogueMatchesReference) {
  for (const Activation act : {Activation::gelu, Activation::gelu_tanh, Activation::relu, Activation::silu})
    for (const DType t : {DType::f32, DType::bf16}) {
      Gemm g;
      g.M = 70;
      g.N = 24;
      g.K = 100;
      g.trans_b = true;
      g.a_type = g.b_type = g.c_type = t;
      g.bias = reinterpret_cast<const float*>(1);  // run_case substitutes a real bias
      g.has_activation = true;
      g.activation = act;
      run_case(g, 70 * 100, 24 * 100, 70 * 24, 1e-4,
               std::string("activation ") + std::to_string(static_cast<int>(act)) + " " + dtype_name(t));
    }
  Gemm bad;
  bad.M = bad.N = bad.K = 4;
  bad.has_activation = true;
  bad.accumulate = true;
  std::vector<float> x(16);
  EXPECT_THROW(gemm(bad, x.data(), x.data(), x.data()), Error);
}

// C = A B^T + bias + residual in one pass, residual laid out like C (a padded ldc), with and without an
// activation before it, f32 and bf16 operands, with a row tail (70 rows) and a reduction of 100.
TEST(Gemm, ResidualEpilogueMatchesReference) {
  for (const bool with_act : {false, true})
    for (const DType t : {DType::f32, DType::bf16}) {
      Gemm g;
      g.M = 70;
      g.N = 24;
      g.K = 100;
      g.ldc = 30;
      g.trans_b = true;
      g.a_type = g.b_type = t;
      g.has_activation = with_act;
      auto a = randn(70 * 100, 1), b = randn(24 * 100, 2), res = randn(70 * 30, 3), bias = randn(24, 4);
      std::vector<uint16_t> abf = to_bf(a), bbf = to_bf(b);
      const void* ap = t == DType::f32 ? static_cast<const void*>(a.data()) : abf.data();
      const void* bp = t == DType::f32 ? static_cast<const void*>(b.data()) : bbf.data();
      g.bias = bias.data();
      g.residual = res.data();
      std::vector<float> got(70 * 30, 7.0f), want(70 * 30, 7.0f);
      gemm(g, ap, bp, got.data());
      gemm_reference(g, ap, bp, want.data());
      expect_close(got, want, 1e-4, 1e-4,
                   std::string("residual ") + dtype_name(t) + (with_act ? " act" : ""));
      for (int64_t m = 0; m < 70; ++m)  // the gap past N in every row of C is left alone
        for (int64_t n = 24; n < 30; ++n) ASSERT_EQ(got[m * 30 + n], 7.0f);
    }
  Gemm bad;
  bad.M = bad.N = bad.K = 4;
  bad.batch = 2;
  std::vector<float> x(64);
  bad.residual = x.data();
  EXPECT_THROW(gemm(bad, x.data(), x.data(), x.data()), Error);  // batched
  bad.batch = 1;
  bad.accumulate = true;
  EXPECT_THROW(gemm(bad, x.data(), x.data(), x.data()), Error);  // accumulating
}

// Runs on every CPU: natively where oneDNN has a bf16 matmul, widened to f32 elsewhere.
TEST(Gemm, Bf16OperandsF32AndBf16Output) {
  Gemm g;
  g.M = 33;
  g.N = 20;
  g.K = 64;
  g.trans_b = true;
  g.a_type = g.b_type = DType::bf16;
  // Same bf16 inputs on both sides, f32 accumulation: only summation order differs.
  run_case(g, 33 * 64, 20 * 64, 33 * 20, 1e-4, "bf16 x bf16 -> f32");
  g.c_type = DType::bf16;
  run_case(g, 33 * 64, 20 * 64, 33 * 20, 0, "bf16 x bf16 -> bf16");
  g.c_type = DType::f32;
  g.accumulate = true;
  g.trans_a = true;
  run_case(g, 33 * 64, 20 * 64, 33 * 20, 1e-4, "bf16 trans_a accumulate");
}

TEST(Gemm, PrimitivesAreCachedPerDescriptor) {
  Gemm g;
  g.M = 3;
  g.N = 19;
  g.K = 11;
  std::vector<float> a = randn(33, 5), b = randn(11 * 19, 6), c(57);
  gemm(g, a.data(), b.data(), c.data());
  const int64_t n = gemm_cache_size();
  gemm(g, a.data(), b.data(), c.data());
  EXPECT_EQ(gemm_cache_size(), n);
  g.accumulate = true;
  gemm(g, a.data(), b.data(), c.data());
  EXPECT_EQ(gemm_cache_size(), n + 1);
}

// Row counts and reductions past 64 that are not multiples of it run split (packed batches change them every
// step): same results in every layout, with bias and accumulate, and few primitives for many counts.
TEST(Gemm, VaryingRowAndReductionCountsSplitExactlyAndKeepTheCacheSmall) {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool acc : {false, true}) {
        Gemm g;
        g.M = 150;
        g.N = 19;
        g.K = 133;
        g.trans_a = ta;
        g.trans_b = tb;
        g.accumulate = acc;
        g.bias = acc ? nullptr : reinterpret_cast<const float*>(1);  // run_case supplies the bias
        run_case(
            g, 150 * 133, 19 * 133, 150 * 19, 1e-4,
            std::string("ta=") + (ta ? "1" : "0") + " tb=" + (tb ? "1" : "0") + " acc=" + (acc ? "1" : "0"));
      }
  // Linear forward and weight gradient over 200 token counts.
  std::vector<float> x = randn(400 * 32, 7), w = randn(48 * 32, 8), y(400 * 48), dw(48 * 32);
  const int64_t before = gemm_cache_size();
  for (int64_t tokens = 201; tokens <= 400; ++tokens) {
    Gemm f;  // y[tokens, 48] = x[tokens, 32] w^T
    f.M = tokens;
    f.N = 48;
    f.K = 32;
    f.trans_b = true;
    gemm(f, x.data(), w.data(), y.data());
    Gemm d;  // dw[48, 32] = y^T x, reduced over tokens
    d.M = 48;
    d.N = 32;
    d.K = tokens;
    d.trans_a = true;
    d.lda = 48;
    gemm(d, y.data(), x.data(), dw.data());
  }
  // Not 200 shapes per product: the forward's multiples of 64 in range (192 ... 384) plus its row tails (16,
  // 32, 48 or 64 rows); the weight gradient's multiples of 64 plus one 64-deep reduction tail.
  EXPECT_LE(gemm_cache_size() - before, (4 + 4) + (4 + 1));
}

TEST(Gemm, ConcurrentCallersShareTheCacheSafely) {
  // Comm worker threads never multiply, but the cache must still be safe for any caller.
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &ok] {
      Gemm g;
      g.M = 8 + t % 2;  // two threads share each descriptor
      g.N = 12;
      g.K = 16;
      auto a = randn(g.M * g.K, 30 + t), b = randn(g.K * g.N, 40 + t);
      std::vector<float> c(g.M * g.N), want(g.M * g.N);
      gemm_reference(g, a.data(), b.data(), want.data());
      bool good = true;
      for (int rep = 0; rep < 50; ++rep) {
        gemm(g, a.data(), b.data(), c.data());
        for (size_t i = 0; i < c.size(); ++i) good = good && std::fabs(c[i] - want[i]) < 1e-4;
      }
      ok[t] = good;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, (std::vector<int>{1, 1, 1, 1}));
}

// Inside an OpenMP parallel region every thread runs whole products of its own (attention's per-head tasks):
// the same descriptors at once on different buffers, with bias and accumulate, and an exact-shape product
// (quantize_shape off, M and K not multiples of 64), each equal to the reference on every thread.
TEST(Gemm, ProductsInsideAParallelRegionRunOnTheirThreadAlone) {
  constexpr int kThreads = 3, kTasks = 12;
  std::vector<int> ok(kTasks, 0);
#pragma omp parallel for num_threads(kThreads) schedule(dynamic, 1)
  for (int t = 0; t < kTasks; ++t) {
    Gemm g;
    g.M = t % 2 ? 70 : 64;
    g.N = 24;
    g.K = t % 3 ? 96 : 67;
    g.quantize_shape = t % 4 != 0;
    auto a = randn(g.M * g.K, 60 + t), b = randn(g.K * g.N, 70 + t), bias = randn(g.N, 80 + t);
    if (t % 2) g.bias = bias.data();
    std::vector<float> c(g.M * g.N), want(g.M * g.N);
    gemm_reference(g, a.data(), b.data(), want.data());
    bool good = true;
    for (int rep = 0; rep < 20; ++rep) {
      gemm(g, a.data(), b.data(), c.data());
      for (size_t i = 0; i < c.size(); ++i) good = good && std::fabs(c[i] - want[i]) < 1e-3;
    }
    Gemm acc = g;  // C += A B on top of the last result
    acc.bias = nullptr;
    acc.accumulate = true;
    gemm(acc, a.data(), b.data(), c.data());
    gemm_reference(acc, a.data(), b.data(), want.data());
    for (size_t i = 0; i < c.size(); ++i) good = good && std::fabs(c[i] - want[i]) < 2e-3;
    ok[t] = good;
  }
  EXPECT_EQ(ok, std::vector<int>(kTasks, 1));
}

TEST(Gemm, BadDescriptorsThrow) {
  std::vector<float> a(64), b(64), c(64);
  Gemm g;
  g.M = 4;
  g.N = 4;
  g.K = 4;
  g.lda = 3;
  EXPECT_THROW(gemm(g, a.data(), b.data(), c.data()), Error);
  g.lda = 0;
  g.a_type = DType::bf16;
  EXPECT_THROW(gemm(g, a.data(), b.data(), c.data()), Error);
  g.a_type = DType::f32;
  g.M = -1;
  EXPECT_THROW(gemm(g, a.data(), b.data(), c.data()), Error);
}

TEST(Linear, ForwardBackwardMatchLoopsAndFiniteDifferences) {
  const int64_t BT = 6, C = 5, OC = 7;
  auto x = randn(BT * C, 11), w = randn(OC * C, 12), bias = randn(OC, 13), r = randn(BT * OC, 14);
  std::vector<float> y(BT * OC);
  linear_forward(y.data(), DType::f32, x.data(), w.data(), bias.data(), BT, C, OC, DType::f32);
  for (int64_t i = 0; i < BT; ++i)
    for (int64_t o = 0; o < OC; ++o) {
      double s = bias[o];
      for (int64_t c = 0; c < C; ++c) s += static_cast<double>(x[i * C + c]) * w[o * C + c];
      EXPECT_NEAR(y[i * OC + o], s, 1e-5);
    }
  // loss = sum(y * r): dy = r.
  std::vector<float> dx(BT * C, 1.0f), dw(OC * C, 1.0f), db(OC, 1.0f);  // ones: backward must ADD
  linear_backward(dx.data(), dw.data(), db.data(), r.data(), r.data(), x.data(), w.data(), BT, C, OC,
                  DType::f32);
  for (auto& v : dx) v -= 1.0f;
  for (auto& v : dw) v -= 1.0f;
  for (auto& v : db) v -= 1.0f;
  auto loss = [&] {
    std::vector<float> yy(BT * OC);
    linear_forward(yy.data(), DType::f32, x.data(), w.data(), bias.data(), BT, C, OC, DType::f32);
    return test::dot(yy, r);
  };
  test::expect_fd(loss, x.data(), dx.data(), BT * C, 1e-2, 2e-3, 1e-3, "dx");
  test::expect_fd(loss, w.data(), dw.data(), OC * C, 1e-2, 2e-3, 1e-3, "dw");
  test::expect_fd(loss, bias.data(), db.data(), OC, 1e-2, 2e-3, 1e-3, "db");
}

}  // namespace
}  // namespace ct::kernels

// CPU feature queries are consistent with each other and with what oneDNN actually runs; the matmul peak
// measurement returns a positive rate, and for bf16 either a rate or (without a oneDNN bf16 matmul) a clear
// error.
#include "kernels/cpu_features.h"

#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "kernels/gemm.h"
#include "kernels/peak.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

TEST(CpuFeatures, Consistent) {
  EXPECT_FALSE(cpu_isa_name().empty());
  if (cpu_has_amx_bf16()) {
    EXPECT_TRUE(cpu_has_avx512_bf16());
  }
  EXPECT_EQ(cpu_has_fast_bf16(), cpu_has_avx512_bf16() || cpu_has_amx_bf16());
  if (cpu_has_fast_bf16()) {
    EXPECT_TRUE(bf16_matmul_supported());
  }
  const std::string reason = bf16_matmul_unavailable_reason();
  EXPECT_NE(reason.find("ISA " + cpu_isa_name()), std::string::npos) << reason;
}

// The query is cached and thread-safe; a bf16 product runs on every CPU (natively where the query says yes,
// widened where it says no) and, on values whose products and sums are exact, gives the reference's bits,
// both widened explicitly and through gemm(), for f32 and bf16 output, plain, accumulating, and with the
// strided two-level batch attention uses.
TEST(CpuFeatures, Bf16GemmRunsWithOrWithoutAOneDnnBf16Matmul) {
  std::vector<int> answers(4, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back([t, &answers] { answers[t] = bf16_matmul_supported(); });
  for (auto& th : threads) th.join();
  EXPECT_EQ(answers, std::vector<int>(4, bf16_matmul_supported()));

  // Two sequences x two heads of [T=3, HS=5] on rows of 3 * 2 * 5 (fused qkv-like), times B^T per head.
  Gemm g;
  g.batch_outer = 2;
  g.batch = 2;
  g.M = 3;
  g.N = 4;
  g.K = 5;
  g.trans_b = true;
  g.lda = 30;
  g.stride_a = 5;
  g.outer_stride_a = 3 * 30;
  g.ldb = 5;
  g.stride_b = 4 * 5;
  g.outer_stride_b = 2 * 4 * 5;
  g.ldc = 9;  // C rows padded: the gap must be left alone
  g.stride_c = 3 * 9;
  g.outer_stride_c = 2 * 3 * 9;
  g.a_type = g.b_type = DType::bf16;
  std::vector<bf16> a(2 * 3 * 30), b(2 * 2 * 4 * 5);
  for (size_t i = 0; i < a.size(); ++i) a[i] = to_bf16(0.25f * static_cast<float>(i % 5) - 0.5f);
  for (size_t i = 0; i < b.size(); ++i) b[i] = to_bf16(0.5f * static_cast<float>(i % 3));
  for (const bool acc : {false, true})
    for (const DType out : {DType::f32, DType::bf16}) {
      g.c_type = out;
      g.accumulate = acc;
      const int64_t n = 2 * 2 * 3 * 9;
      std::vector<float> cf(n), cf_ref(n), cf_wide(n);
      std::vector<bf16> cb(n), cb_ref(n), cb_wide(n);
      for (int64_t i = 0; i < n; ++i) cf[i] = cf_ref[i] = cf_wide[i] = 0.125f * static_cast<float>(i % 7);
      for (int64_t i = 0; i < n; ++i) cb[i] = cb_ref[i] = cb_wide[i] = to_bf16(cf[i]);
      auto ptr = [&](std::vector<float>& f, std::vector<bf16>& h) {
        return out == DType::f32 ? static_cast<void*>(f.data()) : static_cast<void*>(h.data());
      };
      const std::string what = std::string(acc ? "accumulate " : "") + "-> " + dtype_name(out);
      ASSERT_NO_THROW(gemm(g, a.data(), b.data(), ptr(cf, cb))) << what;
      gemm_bf16_widened(g, a.data(), b.data(), ptr(cf_wide, cb_wide));
      gemm_reference(g, a.data(), b.data(), ptr(cf_ref, cb_ref));
      for (int64_t i = 0; i < n; ++i) {
        if (out == DType::f32) {
          ASSERT_EQ(cf[i], cf_ref[i]) << what << " at " << i;
          ASSERT_EQ(cf_wide[i], cf_ref[i]) << what << " widened at " << i;
        } else {
          ASSERT_EQ(cb[i].bits, cb_ref[i].bits) << what << " at " << i;
          ASSERT_EQ(cb_wide[i].bits, cb_ref[i].bits) << what << " widened at " << i;
        }
      }
    }
}

TEST(Peak, MeasuresPositiveRateAndRejectsBadShapes) {
  EXPECT_GT(measure_matmul_gflops(DType::f32, 32, 48, 64, 2), 0.0);
  EXPECT_THROW(measure_matmul_gflops(DType::f32, 0, 48, 64), Error);
  EXPECT_THROW(measure_matmul_gflops(DType::bf16, 32, -1, 64), Error);
  EXPECT_THROW(measure_matmul_gflops(DType::f32, 32, 48, 64, 0), Error);
  EXPECT_GT(measure_matmul_gflops(DType::f32, 32, 48, 64, 1, 0.01), 0.0);  // repeats for 10 ms
  EXPECT_THROW(measure_matmul_gflops(DType::f32, 32, 48, 64, 1, -1.0), Error);
}

TEST(Peak, Bf16MeasuresPositiveRate) {
  CT_SKIP_WITHOUT_BF16_MATMUL();
  EXPECT_GT(measure_matmul_gflops(DType::bf16, 32, 48, 64, 2), 0.0);
}

TEST(Peak, Bf16WithoutBf16MatmulFailsNamingTheReason) {
  if (bf16_matmul_supported())
    GTEST_SKIP() << "oneDNN has a bf16 matmul on this CPU (ISA " << cpu_isa_name()
                 << "); BenchMatmul.WithoutBf16MatmulSaysSo covers this path under DNNL_MAX_CPU_ISA=AVX2";
  try {
    measure_matmul_gflops(DType::bf16, 32, 48, 64, 2);
    ADD_FAILURE() << "bf16 peak measured although bf16_matmul_supported() is false";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "matmul peak: bf16: " + bf16_matmul_unavailable_reason());
  }
}

}  // namespace
}  // namespace ct::kernels

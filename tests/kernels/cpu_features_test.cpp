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

// The query is what gemm does: a tiny bf16 product (f32 and bf16 output) runs exactly where the query says
// yes, and elsewhere fails with an error naming the reason. Meaningful on both kinds of CPU.
TEST(CpuFeatures, Bf16MatmulQueryMatchesGemm) {
  std::vector<int> answers(4, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back([t, &answers] { answers[t] = bf16_matmul_supported(); });
  for (auto& th : threads) th.join();
  const bool supported = bf16_matmul_supported();
  EXPECT_EQ(answers, std::vector<int>(4, supported));

  std::vector<bf16> a(3 * 5), b(5 * 7), c_bf(3 * 7);
  std::vector<float> c(3 * 7);
  for (size_t i = 0; i < a.size(); ++i) a[i] = to_bf16(0.25f * static_cast<float>(i % 5));
  for (size_t i = 0; i < b.size(); ++i) b[i] = to_bf16(0.5f * static_cast<float>(i % 3));
  Gemm g;
  g.M = 3;
  g.N = 7;
  g.K = 5;
  g.a_type = g.b_type = DType::bf16;
  for (const DType out : {DType::f32, DType::bf16}) {
    g.c_type = out;
    void* cp = out == DType::f32 ? static_cast<void*>(c.data()) : static_cast<void*>(c_bf.data());
    if (supported) {
      EXPECT_NO_THROW(gemm(g, a.data(), b.data(), cp)) << dtype_name(out);
    } else {
      try {
        gemm(g, a.data(), b.data(), cp);
        ADD_FAILURE() << "bf16 gemm ran although bf16_matmul_supported() is false";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(bf16_matmul_unavailable_reason()), std::string::npos)
            << e.what();
      }
    }
  }
}

TEST(Peak, MeasuresPositiveRateAndRejectsBadShapes) {
  EXPECT_GT(measure_matmul_gflops(DType::f32, 32, 48, 64, 2), 0.0);
  EXPECT_THROW(measure_matmul_gflops(DType::f32, 0, 48, 64), Error);
  EXPECT_THROW(measure_matmul_gflops(DType::bf16, 32, -1, 64), Error);
  EXPECT_THROW(measure_matmul_gflops(DType::f32, 32, 48, 64, 0), Error);
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

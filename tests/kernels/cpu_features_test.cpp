// CPU feature queries are consistent with each other; the matmul peak measurement returns a positive rate.
#include "kernels/cpu_features.h"

#include "core/error.h"
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
}

TEST(Peak, MeasuresPositiveRateAndRejectsBadShapes) {
  EXPECT_GT(measure_matmul_gflops(DType::f32, 32, 48, 64, 2), 0.0);
  EXPECT_GT(measure_matmul_gflops(DType::bf16, 32, 48, 64, 2), 0.0);
  EXPECT_THROW(measure_matmul_gflops(DType::f32, 0, 48, 64), Error);
}

}  // namespace
}  // namespace ct::kernels

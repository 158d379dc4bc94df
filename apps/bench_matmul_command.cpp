// `coretrain bench matmul`: the GFLOP/s a oneDNN matmul of the given shape reaches here, f32 and bf16 (the
// peak that `bench step` divides by for model-FLOP utilization). Defaults are BERT-base's FFN product at
// batch 4 x 384. Where oneDNN has no bf16 matmul (AVX2-only CPUs), the bf16 line says so; --bf16 alone then
// fails with that reason.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "apps/cli_checks.h"
#include "apps/command.h"
#include "core/error.h"
#include "core/parallel.h"
#include "kernels/cpu_features.h"
#include "kernels/peak.h"

namespace {

int run_bench_matmul(int argc, char** argv) {
  CLI::App app{"Time a oneDNN matmul C[M,N] = A[M,K] B[K,N] and print GFLOP/s (f32 and bf16)",
               "coretrain bench matmul"};
  int64_t m = 1536, n = 3072, k = 768;
  int reps = 10;
  bool bf16_only = false;
  app.add_option("--m", m, "rows of A and C")->check(ct::app::kPositive);
  app.add_option("--n", n, "columns of B and C")->check(ct::app::kPositive);
  app.add_option("--k", k, "inner dimension")->check(ct::app::kPositive);
  app.add_option("--reps", reps, "timed repetitions (best is reported)")->check(ct::app::kPositive);
  app.add_flag("--bf16", bf16_only,
               "only the bf16 measurement; exits 1 with the reason where oneDNN has no bf16 matmul (it needs "
               "AVX512, or AVX512-BF16/AMX to be fast)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const bool bf16_ok = ct::kernels::bf16_matmul_supported();
  CT_CHECK(bf16_ok || !bf16_only, "--bf16: ", ct::kernels::bf16_matmul_unavailable_reason());
  std::printf("matmul M=%lld N=%lld K=%lld, %d threads, ISA %s\n", static_cast<long long>(m),
              static_cast<long long>(n), static_cast<long long>(k), ct::num_threads(),
              ct::kernels::cpu_isa_name().c_str());
  if (!bf16_only)
    std::printf("f32:  %.1f GFLOP/s\n", ct::kernels::measure_matmul_gflops(ct::DType::f32, m, n, k, reps));
  if (!bf16_ok) {
    std::printf("bf16: not available: %s\n", ct::kernels::bf16_matmul_unavailable_reason().c_str());
    return 0;
  }
  const double bf = ct::kernels::measure_matmul_gflops(ct::DType::bf16, m, n, k, reps);
  std::printf("bf16: %.1f GFLOP/s%s\n", bf,
              ct::kernels::cpu_has_fast_bf16() ? "" : " (no AVX512-BF16/AMX on this CPU: emulated, slow)");
  return 0;
}

}  // namespace

CT_COMMAND("bench matmul", "time a oneDNN matmul (GFLOP/s, f32 and bf16)", run_bench_matmul);

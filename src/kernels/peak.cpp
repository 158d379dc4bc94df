// Matmul peak measurement for MFU: a dense oneDNN matmul through the same gemm path the model uses.
#include "kernels/peak.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/error.h"
#include "kernels/cpu_features.h"
#include "kernels/gemm.h"

namespace ct::kernels {

DType peak_dtype(DType run) {
  return run == DType::bf16 && bf16_matmul_supported() ? DType::bf16 : DType::f32;
}

double measure_matmul_gflops(DType dtype, int64_t M, int64_t N, int64_t K, int reps, double min_seconds) {
  CT_CHECK(M > 0 && N > 0 && K > 0 && reps > 0, "matmul peak: sizes must be positive (M=", M, " N=", N,
           " K=", K, ")");
  CT_CHECK(min_seconds >= 0, "matmul peak: min_seconds is ", min_seconds, ", expected >= 0");
  CT_CHECK(dtype != DType::bf16 || bf16_matmul_supported(),
           "matmul peak: bf16: ", bf16_matmul_unavailable_reason());
  Tensor a = Tensor::zeros({M, K}, dtype), b = Tensor::zeros({K, N}, dtype),
         c = Tensor::zeros({M, N}, DType::f32);
  // Non-trivial values (zeros could take shortcuts in no library we know of, but be safe).
  std::vector<float> tmp(static_cast<size_t>(std::max(M * K, K * N)));
  for (size_t i = 0; i < tmp.size(); ++i)
    tmp[i] = static_cast<float>((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
  if (dtype == DType::f32) {
    std::copy(tmp.begin(), tmp.begin() + M * K, a.f32());
    std::copy(tmp.begin(), tmp.begin() + K * N, b.f32());
  } else {
    f32_to_bf16(tmp.data(), a.bf(), M * K);
    f32_to_bf16(tmp.data(), b.bf(), K * N);
  }
  Gemm g;
  g.M = M;
  g.N = N;
  g.K = K;
  g.a_type = g.b_type = dtype;
  gemm(g, a.data(), b.data(), c.data());  // warm-up (primitive creation, page faults)
  constexpr int kMaxReps = 1000;
  double best = 1e30, spent = 0;
  for (int r = 0; r < reps || (spent < min_seconds && r < kMaxReps); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    gemm(g, a.data(), b.data(), c.data());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
    spent += s;
  }
  return 2.0 * static_cast<double>(M) * N * K / best / 1e9;
}

}  // namespace ct::kernels

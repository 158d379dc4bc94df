// Measured matmul peak: the GFLOP/s a oneDNN matmul of given shapes reaches on this machine right now, the
// denominator of model-FLOP utilization in `coretrain bench step`.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace ct::kernels {

// Times C[M, N] = A[M, K] * B[K, N] with operands of `dtype` (f32 accumulate/output), best of `reps` runs
// after a warm-up, and of as many more as fit in `min_seconds` (at most 1,000 in all); returns
// 2*M*N*K / seconds / 1e9. Spreading the runs over time keeps a stall of the host, which on a shared VM can
// slow every one of five 12 ms runs, out of the best one. Throws ct::Error on non-positive sizes or reps, a
// negative min_seconds, and for bf16 where bf16_matmul_supported() is false.
double measure_matmul_gflops(DType dtype, int64_t M, int64_t N, int64_t K, int reps = 5,
                             double min_seconds = 0);

// The peak a run in `run` precision is measured against: bf16 where oneDNN has a bf16 matmul, else f32 (a
// widened bf16 product runs on the f32 units, see gemm.h).
DType peak_dtype(DType run);

}  // namespace ct::kernels

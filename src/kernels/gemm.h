// General matrix multiply through oneDNN matmul primitives, created once per shape/layout/dtype and cached.
// Row-major, strided, optionally batched, so attention's per-head products run straight on [B, T, H] activations
// without transposes. Inputs may be f32 or bf16 (autocast-style: bf16 operands, f32 accumulation); the output is
// f32 or bf16. `accumulate` adds into C (gradient accumulation) instead of overwriting it.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace ct::kernels {

struct Gemm {
  // C[b] (+)= alpha * op(A[b]) * op(B[b]) (+ bias), b in [0, batch)
  int64_t batch = 1;
  int64_t M = 0, N = 0, K = 0;
  bool trans_a = false;  // op(A) = A^T: A stored [K, M]
  bool trans_b = false;  // op(B) = B^T: B stored [N, K] (a Linear weight [out, in])
  int64_t lda = 0, ldb = 0, ldc = 0;  // leading dimensions (row strides) in elements; 0 = dense
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // batch strides in elements; 0 = dense
  DType a_type = DType::f32, b_type = DType::f32, c_type = DType::f32;
  float alpha = 1.0f;
  bool accumulate = false;
  const float* bias = nullptr;  // [N], f32, added to every row
};

void gemm(const Gemm& g, const void* a, const void* b, void* c);

// Plain triple loop over the same descriptor (f32 math; bf16 operands widened): the test reference.
void gemm_reference(const Gemm& g, const void* a, const void* b, void* c);

}  // namespace ct::kernels

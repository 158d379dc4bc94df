// General matrix multiply through oneDNN matmul primitives, created once per shape/layout/dtype and cached.
// Row-major, strided, optionally batched, so attention's per-head products run straight on [B, T, H]
// activations without transposes. Inputs may be f32 or bf16 (autocast-style: bf16 operands, f32
// accumulation); the output is f32 or bf16. `accumulate` adds into C (gradient accumulation) instead of
// overwriting it.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "kernels/activation.h"

namespace ct::kernels {

struct Gemm {
  // C[o][b] (+)= alpha * op(A[o][b]) * op(B[o][b]) (+ bias), o in [0, batch_outer), b in [0, batch)
  int64_t batch = 1;
  int64_t M = 0, N = 0, K = 0;
  bool trans_a = false;               // op(A) = A^T: A stored [K, M]
  bool trans_b = false;               // op(B) = B^T: B stored [N, K] (a Linear weight [out, in])
  int64_t lda = 0, ldb = 0, ldc = 0;  // leading dimensions (row strides) in elements; 0 = dense
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // batch strides in elements; 0 = dense
  DType a_type = DType::f32, b_type = DType::f32, c_type = DType::f32;
  float alpha = 1.0f;
  bool accumulate = false;
  const float* bias = nullptr;  // [N], f32, added to every row
  // Applied to C after the bias, in the same pass (oneDNN eltwise post-op): a Linear and its activation at
  // inference, where the pre-activation is not kept. Not with accumulate.
  bool has_activation = false;
  Activation activation = Activation::gelu;
  // [M, N] f32 laid out like C (ldc), added last in the same pass (oneDNN binary post-op): a Linear and the
  // residual connection after it. Unbatched products only; not with accumulate. May not alias C.
  const float* residual = nullptr;
  // A second (outer) batch dimension, so attention can batch over (sequence, head) on [B, T, NH*HS] rows
  // where the head stride (HS) and the sequence stride (T*ld) are unrelated. Outer strides must be given (no
  // dense default) when batch_outer > 1. A stride of 0 in a batched operand with batch > 1 means dense, as
  // above.
  int64_t batch_outer = 1;
  int64_t outer_stride_a = 0, outer_stride_b = 0, outer_stride_c = 0;
  // Unbatched products whose M or K is not a multiple of 64 normally run as the multiple-of-64 part plus a
  // zero-padded copy of the rest, so that token counts that change every step do not create a primitive
  // each (gemm.cpp). false: one primitive for this exact shape, for callers whose shapes are few already
  // (attention's per-head products, one set per key length).
  bool quantize_shape = true;
};

// Runs the product; throws ct::Error on a descriptor that is inconsistent (negative sizes, ld < row length,
// ...). Where oneDNN has no bf16 matmul (bf16_matmul_supported() false: AVX2-only CPUs with oneDNN 2.x), a
// bf16 product runs widened to f32 with the same arithmetic (see gemm.cpp), at f32 speed.
// Thread-safe: the primitive cache is shared and locked; execution uses oneDNN's OpenMP threads, or, called
// inside an OpenMP parallel region, the calling thread alone (so that threads can run products of their own
// side by side, e.g. one attention head each).
void gemm(const Gemm& g, const void* a, const void* b, void* c);

// What gemm() runs for a bf16 product where oneDNN has no bf16 matmul: operands widened to f32, one rounding
// of a bf16 C. Public so that tests cover it on every CPU.
void gemm_bf16_widened(const Gemm& g, const void* a, const void* b, void* c);

// Plain triple loop over the same descriptor (double accumulation; bf16 operands widened): the test
// reference.
void gemm_reference(const Gemm& g, const void* a, const void* b, void* c);

// Number of distinct primitives created so far (tests check the cache reuses them).
int64_t gemm_cache_size();

}  // namespace ct::kernels

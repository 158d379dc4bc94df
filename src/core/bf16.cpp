#include "core/bf16.h"

namespace ct {

void f32_to_bf16(const float* src, bf16* dst, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) dst[i].bits = f32_to_bf16_bits(src[i]);
}

void bf16_to_f32(const bf16* src, float* dst, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_bits_to_f32(src[i].bits);
}

}  // namespace ct

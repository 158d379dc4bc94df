// bfloat16 storage type and conversions. Rounding is round-to-nearest-even, as oneDNN, PyTorch and the
// collectives' "reduce in f32, round once" rule require; NaN stays NaN (quiet).
#pragma once

#include <cstdint>
#include <cstring>

namespace ct {

struct bf16 {
  uint16_t bits;
};
static_assert(sizeof(bf16) == 2);

inline uint16_t f32_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float bf16_bits_to_f32(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline bf16 to_bf16(float f) {
  return bf16{f32_to_bf16_bits(f)};
}
inline float to_f32(bf16 b) {
  return bf16_bits_to_f32(b.bits);
}
// The value f takes after a round trip through bf16 (what autocast does to a matmul input).
inline float round_bf16(float f) {
  return bf16_bits_to_f32(f32_to_bf16_bits(f));
}

// Bulk conversions; vectorized where the compiler can.
void f32_to_bf16(const float* src, bf16* dst, int64_t n);
void bf16_to_f32(const bf16* src, float* dst, int64_t n);

}  // namespace ct

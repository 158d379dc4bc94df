// Branch-free exp / erf / tanh in plain C++ that gcc vectorizes inside `#pragma omp simd` loops (libm's
// scalar calls would not). exp is within ~2 ulp on its range and returns exactly 0 below -87.3 (masked
// attention scores must give probability 0, as in torch); erfc is relatively accurate (see below).
#pragma once

#include <bit>
#include <cstdint>

namespace ct::kernels {

inline float fast_exp(float x) {
  const float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  const bool underflow = x < -87.3f;
  x = x > 88.3f ? 88.3f : (x < -87.3f ? -87.3f : x);
  const float kShift = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds to nearest integer
  const float n = (x * kLog2e + kShift) - kShift;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return underflow ? 0.0f : p * scale;
}

// erfc with relative error < 1.2e-7 over the whole line (Chebyshev fit, Numerical Recipes' erfcc), so
// GELU's 1 + erf(x) = erfc(-x) stays relatively accurate for negative x, where 1 + erf would cancel.
inline float fast_erfc(float x) {
  const float z = x < 0.0f ? -x : x;
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float r = t * fast_exp(-z * z + p);
  return x < 0.0f ? 2.0f - r : r;
}

inline float fast_erf(float x) {
  return 1.0f - fast_erfc(x);
}

inline float fast_tanh(float x) {
  const float e = fast_exp(2.0f * (x > 20.0f ? 20.0f : (x < -20.0f ? -20.0f : x)));
  return (e - 1.0f) / (e + 1.0f);
}

}  // namespace ct::kernels

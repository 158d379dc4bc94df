#include "kernels/rotary.h"

#include <cmath>

#include "core/error.h"

namespace ct::kernels {
namespace {

void check(const int32_t* positions, int64_t rows, const RotaryTable& t) {
  for (int64_t r = 0; r < rows; ++r)
    CT_CHECK(positions[r] >= 0 && positions[r] < t.max_positions, "rotary embedding: row ", r,
             " has position ", positions[r], " outside the table of ", t.max_positions, " positions");
}

// x[i] <- x[i] c - x[i + h] s,  x[i + h] <- x[i + h] c + x[i] s  (h = d / 2), with s negated for backward.
template <bool kInverse>
void rotate(float* x, const int32_t* positions, int64_t rows, int64_t heads, int64_t row_stride,
            const RotaryTable& t) {
  check(positions, rows, t);
  const int64_t half = t.head_dim / 2;
#pragma omp parallel for schedule(static) if (rows * heads * half > 16384)
  for (int64_t r = 0; r < rows; ++r) {
    const float* c = t.cos.data() + static_cast<int64_t>(positions[r]) * half;
    const float* s = t.sin.data() + static_cast<int64_t>(positions[r]) * half;
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x + r * row_stride + h * t.head_dim;
#pragma omp simd
      for (int64_t i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half];
        const float sn = kInverse ? -s[i] : s[i];
        // torch: q * cos + rotate_half(q) * sin, rotate_half(q) = (-q2, q1)
        v[i] = a * c[i] + (-b) * sn;
        v[i + half] = b * c[i] + a * sn;
      }
    }
  }
}

}  // namespace

RotaryTable make_rotary_table(int64_t max_positions, int64_t head_dim, double theta) {
  CT_CHECK(head_dim > 0 && head_dim % 2 == 0, "rotary embedding: head dimension ", head_dim,
           " (expected a positive even number)");
  CT_CHECK(theta > 0, "rotary embedding: rope_theta ", theta, " (expected > 0)");
  const int64_t half = head_dim / 2;
  std::vector<float> inv_freq(half);
  for (int64_t i = 0; i < half; ++i)
    inv_freq[i] =
        1.0f / std::pow(static_cast<float>(theta), static_cast<float>(2 * i) / static_cast<float>(head_dim));
  RotaryTable t = make_rotary_table(max_positions, head_dim, inv_freq, 1.0f);
  t.theta = theta;
  return t;
}

RotaryTable make_rotary_table(int64_t max_positions, int64_t head_dim, const std::vector<float>& inv_freq,
                              float attention_scaling) {
  CT_CHECK(head_dim > 0 && head_dim % 2 == 0, "rotary embedding: head dimension ", head_dim,
           " (expected a positive even number)");
  CT_CHECK(max_positions > 0, "rotary embedding: ", max_positions, " positions (expected > 0)");
  const int64_t half = head_dim / 2;
  CT_CHECK(static_cast<int64_t>(inv_freq.size()) == half, "rotary embedding: ", inv_freq.size(),
           " inverse frequencies for head dimension ", head_dim, " (expected ", half, ")");
  RotaryTable t;
  t.head_dim = head_dim;
  t.max_positions = max_positions;
  t.cos.resize(max_positions * half);
  t.sin.resize(max_positions * half);
  for (int64_t p = 0; p < max_positions; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const float angle = static_cast<float>(p) * inv_freq[i];
      t.cos[p * half + i] = std::cos(angle) * attention_scaling;
      t.sin[p * half + i] = std::sin(angle) * attention_scaling;
    }
  return t;
}

void rotary_forward(float* x, const int32_t* positions, int64_t rows, int64_t heads, int64_t row_stride,
                    const RotaryTable& table) {
  rotate<false>(x, positions, rows, heads, row_stride, table);
}

void rotary_backward(float* dx, const int32_t* positions, int64_t rows, int64_t heads, int64_t row_stride,
                     const RotaryTable& table) {
  rotate<true>(dx, positions, rows, heads, row_stride, table);
}

void rotary_reference(double* x, int64_t head_dim, int64_t position, double theta) {
  const int64_t half = head_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    // The angle as torch rounds it (f32 inverse frequency times the position, in f32); the rotation in
    // double.
    const float inv_freq =
        1.0f / std::pow(static_cast<float>(theta), static_cast<float>(2 * i) / static_cast<float>(head_dim));
    const double angle = static_cast<float>(position) * inv_freq;
    const double a = x[i], b = x[i + half];
    x[i] = a * std::cos(angle) - b * std::sin(angle);
    x[i + half] = b * std::cos(angle) + a * std::sin(angle);
  }
}

}  // namespace ct::kernels

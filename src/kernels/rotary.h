// Rotary position embeddings as transformers' ModernBERT (and Llama/Qwen) apply them: the rotate-half
// convention (dimension i pairs with i + d/2), frequencies inv_freq[i] = 1 / theta^(2i / d) computed in f32,
// angles position * inv_freq[i] in f32, cos/sin of the duplicated angle vector. Applied in place to the query
// and key heads inside attention's fused [rows, 3H] projection rows; backward is the rotation by the opposite
// angle (the transpose), also in place.
#pragma once

#include <cstdint>
#include <vector>

namespace ct::kernels {

// cos/sin per (position, i < d/2) for positions [0, max_positions), f32 as torch computes them.
struct RotaryTable {
  int64_t head_dim = 0, max_positions = 0;
  double theta = 0;
  std::vector<float> cos, sin;  // [max_positions, head_dim / 2]
};
RotaryTable make_rotary_table(int64_t max_positions, int64_t head_dim, double theta);
// The same from given inverse frequencies (the decoders' rope types, model/decoder_config.h), cos and sin
// multiplied by attention_scaling as transformers' rotary modules do (1 for most types).
RotaryTable make_rotary_table(int64_t max_positions, int64_t head_dim, const std::vector<float>& inv_freq,
                              float attention_scaling);

// x: `rows` rows of `heads` heads of head_dim values each, row r starting at x + r * row_stride (so q and k
// of a fused qkv row are rotated by two calls); positions[r] is row r's position. Throws ct::Error naming the
// position when one is outside the table.
void rotary_forward(float* x, const int32_t* positions, int64_t rows, int64_t heads, int64_t row_stride,
                    const RotaryTable& table);
// dx <- R(-angle) dx in place: the gradient with respect to the unrotated input.
void rotary_backward(float* dx, const int32_t* positions, int64_t rows, int64_t heads, int64_t row_stride,
                     const RotaryTable& table);

// Reference of one head vector at `position` (for the tests): torch's f32 angle, the rotation in double.
void rotary_reference(double* x, int64_t head_dim, int64_t position, double theta);

}  // namespace ct::kernels

// Small array steps the encoder body and its heads share: copies, bf16 conversion, dropout over token rows
// (packed batches draw the padded layout's counters), and a Linear's backward split in its input and
// parameter halves.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/bf16.h"
#include "core/tensor.h"
#include "kernels/dropout.h"

namespace ct::model {

// The capacity an activation buffer of a packed batch is (re)built with: `need` plus a quarter, at most
// `upper` (what the padded layout takes), never below `need`. Packed batches bring a new token count and sum
// of squared lengths every step; buffers sized to each new maximum exactly were rebuilt, and re-zeroed, again
// and again.
inline int64_t with_headroom(int64_t need, int64_t upper) {
  return std::max(need, std::min(upper, need + need / 4));
}

void add_into(float* out, const float* a, const float* b, int64_t n);
void copy_f32(float* dst, const float* src, int64_t n);
void zero_f32(float* p, int64_t n);
void to_bf16(bf16* dst, const float* src, int64_t n);

// out = dropout(inp) (out may alias inp) and its bf16 copy when out_b is set; p == 0 is a plain copy. The
// same call on a gradient is the dropout backward.
void apply_dropout(float* out, bf16* out_b, const float* inp, int64_t n, const kernels::DropoutSite& site);

// rows[r] = b * T + t for token row r, position t of packed sequence b (cu as apply_dropout_rows takes it):
// the row the token has in the padded layout, whose dropout counters it draws. Empty when cu is (padded).
void padded_row_positions(std::vector<int64_t>& rows, const std::vector<int64_t>& cu, int64_t T);

// Dropout over [N, width] token rows. Padded (cu empty): one call. Packed: one call per sequence, drawing the
// counters its rows have in the padded [B, T, width] layout (row streams: sequence b's own stream).
void apply_dropout_rows(float* out, bf16* out_b, const float* inp, int64_t N, int64_t width, int64_t T,
                        const std::vector<int64_t>& cu, const kernels::DropoutSite& site);

// dinp[BT, C] = dout[BT, OC] * weight[OC, C], overwriting: saves zeroing dinp for linear_backward's +=.
void linear_backward_input(float* dinp, const void* dout_mm, const void* weight, int64_t BT, int64_t C,
                           int64_t OC, DType mm);

// dweight[OC, C] (+)= dout^T * inp and dbias[OC] += column sums of dout: with accumulate=false the weight
// gradient is overwritten (no zeroing pass, no read of the old values); the bias gradient must start zeroed.
void linear_backward_params(float* dweight, float* dbias, const float* dout_f32, const void* dout_mm,
                            const void* inp, int64_t BT, int64_t C, int64_t OC, DType mm, bool accumulate);

// An activation a head keeps in f32 with, in bf16 mode, the bf16 copy the next matmul reads.
struct HeadTensor {
  std::vector<float> f;
  std::vector<bf16> b;
  void resize(int64_t n) {
    f.assign(static_cast<size_t>(n), 0.0f);
    b.resize(static_cast<size_t>(n));
  }
  // Writes the bf16 copy from f (bf16 mode only).
  void sync(DType dt) {
    if (dt == DType::bf16) to_bf16(b.data(), f.data(), static_cast<int64_t>(f.size()));
  }
  const void* mm(DType dt) const {
    return dt == DType::bf16 ? static_cast<const void*>(b.data()) : static_cast<const void*>(f.data());
  }
};

}  // namespace ct::model

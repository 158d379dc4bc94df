// Global gradient L2 norm and clipping like torch.nn.utils.clip_grad_norm_ (norm_type 2): the norm
// accumulates in double over fixed-size chunks summed in order, so it is the same for any thread count;
// clipping multiplies by max_norm / (norm + 1e-6) only when that is < 1. A non-finite norm is returned as is
// and the gradients are scaled by NaN like torch 1.13 does with error_if_nonfinite=False.
#pragma once

#include <cstdint>

#include "kernels/row_flags.h"

namespace ct::kernels {

// The norm's chunk: grad_sq_sum adds per-chunk double sums of kGradNormChunk elements in chunk order.
inline constexpr int64_t kGradNormChunk = 1 << 14;

// Sum of squares of g[0, n) in double (chunked, thread-count invariant); combine partial slabs by adding
// these. `live`: the rows of one tensor of the slab that may be non-zero; every other row of it must be zero.
// A chunk holding only such zero rows is not read (its sum is exactly 0), so the result is the dense one's
// to the bit.
double grad_sq_sum(const float* g, int64_t n, const RowFlags& live = {});

// The per-chunk sums grad_sq_sum adds, for chunks [first, last) of the n-element slab only: parts[c] for c in
// that range (the other entries are not touched). Adding parts[0, chunks) in order, wherever each range was
// computed, gives grad_sq_sum's result to the bit (sum_chunks).
void grad_sq_chunk_sums(const float* g, int64_t n, int64_t first, int64_t last, double* parts,
                        const RowFlags& live = {});
// parts[0, count) added in order, as grad_sq_sum adds its chunks.
double sum_chunks(const double* parts, int64_t count);

// sqrt(grad_sq_sum): the global L2 norm.
double grad_norm(const float* g, int64_t n, const RowFlags& live = {});

// What clipping to max_norm multiplies the gradients by: max_norm / (norm + 1e-6) in double, rounded to
// float, when that is < 1 or NaN (torch clamps the coefficient to 1; NaN stays NaN); else exactly 1. An
// optimizer that multiplies each gradient by it as it reads it computes the same float product as scaling
// them in place.
float clip_coefficient(double norm, double max_norm);

// g *= coef, the way clipping scales: with `live` (see grad_sq_sum) only the live rows and the rest of the
// slab (zero times a finite coefficient is zero), unless coef is NaN: then every element, as torch does; the
// caller must then take every row as live. coef == 1 is a no-op.
void scale_grads(float* g, int64_t n, float coef, const RowFlags& live = {});

// Clips g in place to max_norm (when max_norm > 0): grad_norm, clip_coefficient, scale_grads. Returns the
// PRE-clip norm (what HF logs as grad_norm).
double clip_grad_norm(float* g, int64_t n, double max_norm, const RowFlags& live = {});

// Scales g in place by coef (shared by clipping and callers that computed the norm across slabs themselves).
void scale_inplace(float* g, int64_t n, float coef);

}  // namespace ct::kernels

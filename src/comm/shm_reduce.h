// Reduction and copy kernels of the shared-memory collectives. Inputs are combined strictly in the order
// given (in[0] op in[1] op ...), so every rank and the test reference get bit-identical sums; bf16 is
// widened, reduced in f32 and rounded once (round-to-nearest-even). AVX-512 when compiled for it, with a
// scalar twin that tests compare against.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/bf16.h"

namespace ct::comm {

enum class Combine : uint8_t { sum, max, min };

// For i in [0, count): v = in[0][i] op ... op in[n_in-1][i]; if divisor != 0, v /= divisor; then every
// out[o][i] = v.
void reduce_f32(const float* const* in, int n_in, float* const* out, int n_out, int64_t count, Combine op,
                float divisor);
void reduce_bf16(const bf16* const* in, int n_in, bf16* const* out, int n_out, int64_t count, Combine op,
                 float divisor);
// Scalar versions (the reference for the vector ones).
void reduce_f32_scalar(const float* const* in, int n_in, float* const* out, int n_out, int64_t count,
                       Combine op, float divisor);
void reduce_bf16_scalar(const bf16* const* in, int n_in, bf16* const* out, int n_out, int64_t count,
                        Combine op, float divisor);

// Byte copy with vector loads/stores (non-overlapping).
void copy_bytes(void* dst, const void* src, size_t n);

}  // namespace ct::comm

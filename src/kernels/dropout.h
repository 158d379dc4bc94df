// Dropout with a counter-based mask: element i of a call is kept iff the Philox uniform for counter offset +
// i (dropout_word() in philox_lanes.h) is >= p, a pure function of (seed, stream, offset + i), so backward
// recomputes the mask instead of storing it and a run is reproducible for any thread count. Kept elements are
// scaled by 1 / (1 - p) (torch semantics); p = 0 is a no-op (out = inp, no random numbers drawn). The caller
// picks a distinct (stream, offset) per dropout site and step, e.g. stream = step, offset = site * 2^40.
#pragma once

#include <cstdint>

#include "core/bf16.h"

namespace ct::kernels {

struct DropoutSite {
  float p = 0.0f;  // probability of zeroing, in [0, 1)
  uint64_t seed = 0;
  uint64_t stream = 0;
  uint64_t offset = 0;  // counter of element 0
  // Per-row streams (data parallelism): element i belongs to row i / row_elems, whose mask comes from stream
  // row_streams[row] and counter offset + i % row_elems. A feature's mask then depends on the feature's key
  // (e.g. its position in the epoch), not on which rank or which row of a batch holds it.
  const uint64_t* row_streams = nullptr;
  int64_t row_elems = 0;
};

// The plain site (one stream) that element i of `s` uses: its counter for element i is offset + i, valid for
// every element of i's row. Without row streams, `s` itself.
inline DropoutSite resolve_row(const DropoutSite& s, int64_t i) {
  if (!s.row_streams) return s;
  const int64_t row = i / s.row_elems;
  DropoutSite r = s;
  r.row_streams = nullptr;
  r.row_elems = 0;
  r.stream = s.row_streams[row];
  r.offset = s.offset - static_cast<uint64_t>(row * s.row_elems);  // wraps: counter = offset + i % row_elems
  return r;
}

// out[i] = keep(i) ? inp[i] / (1 - p) : 0   (OVERWRITES out; out may alias inp). out_bf16 gets a bf16 copy
// when not null. Applying it to a gradient with the same site is exactly the backward, in place if wanted.
void dropout_forward(float* out, bf16* out_bf16, const float* inp, int64_t n, const DropoutSite& site);

// dinp[i] += keep(i) ? dout[i] / (1 - p) : 0   (ADDS). dinp must not alias dout (use dropout_forward for in
// place).
void dropout_backward(float* dinp, const float* dout, int64_t n, const DropoutSite& site);

// keep[i] = 1 or 0 for the site: the test reference (and for callers who want the mask itself).
void dropout_mask_reference(uint8_t* keep, int64_t n, const DropoutSite& site);

}  // namespace ct::kernels

// Dropout by counter-based mask (see dropout.h); parallel over fixed element chunks, so results never depend
// on thread count.
#include "kernels/dropout.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "kernels/philox_lanes.h"

namespace ct::kernels {
namespace {

constexpr int64_t kChunk = 1 << 14;

void check_site(const DropoutSite& s) {
  CT_CHECK(s.p >= 0.0f && s.p < 1.0f, "dropout: probability must be in [0, 1), got ", s.p);
  CT_CHECK(!s.row_streams || s.row_elems > 0, "dropout: row streams need row_elems > 0, got ", s.row_elems);
}

// fn(begin, end, site) over fixed chunks that never straddle a row, each with its row's plain site; parallel,
// and the chunking depends only on n and the row size, never on the thread count.
template <class Fn>
void for_each_chunk(int64_t n, const DropoutSite& site, Fn&& fn) {
  const int64_t row = site.row_streams ? site.row_elems : n;
  const int64_t rows = row > 0 ? (n + row - 1) / row : 0;
  const int64_t per_row = (row + kChunk - 1) / kChunk;
  const int64_t tasks = rows * per_row;
#pragma omp parallel for schedule(static) if (tasks > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t r = t / per_row, c = t % per_row;
    const int64_t b = r * row + c * kChunk;
    const int64_t e = std::min({b + kChunk, (r + 1) * row, n});
    if (b < e) fn(b, e, resolve_row(site, b));
  }
}

}  // namespace

void dropout_forward(float* out, bf16* out_bf16, const float* inp, int64_t n, const DropoutSite& site) {
  check_site(site);
  if (site.p == 0.0f) {
    if (out != inp) std::memcpy(out, inp, sizeof(float) * n);
    if (out_bf16) f32_to_bf16(out, out_bf16, n);
    return;
  }
  for_each_chunk(n, site, [&](int64_t b, int64_t e, const DropoutSite& rs) {
    for_each_dropout(rs.seed, rs.stream, rs.offset, rs.p, b, e, [&](int64_t i, float s) {
      out[i] = inp[i] * s;
      if (out_bf16) out_bf16[i] = to_bf16(out[i]);
    });
  });
}

void dropout_backward(float* dinp, const float* dout, int64_t n, const DropoutSite& site) {
  check_site(site);
  if (site.p == 0.0f) {
#pragma omp parallel for simd schedule(static) if (n > 16384)
    for (int64_t i = 0; i < n; ++i) dinp[i] += dout[i];
    return;
  }
  for_each_chunk(n, site, [&](int64_t b, int64_t e, const DropoutSite& rs) {
    for_each_dropout(rs.seed, rs.stream, rs.offset, rs.p, b, e,
                     [&](int64_t i, float s) { dinp[i] += dout[i] * s; });
  });
}

void dropout_mask_reference(uint8_t* keep, int64_t n, const DropoutSite& site) {
  for (int64_t i = 0; i < n; ++i) {
    const DropoutSite rs = resolve_row(site, i);
    const uint32_t word = dropout_word(rs.seed, rs.stream, rs.offset + static_cast<uint64_t>(i));
    keep[i] = site.p == 0.0f || u32_to_unit_float(word) >= site.p;
  }
}

}  // namespace ct::kernels

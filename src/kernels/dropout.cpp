// Dropout by counter-based mask (see dropout.h); parallel over fixed element chunks, so results never depend
// on thread count.
#include "kernels/dropout.h"

#include <cstring>

#include "core/error.h"
#include "kernels/philox_lanes.h"

namespace ct::kernels {
namespace {

constexpr int64_t kChunk = 1 << 14;

void check_site(const DropoutSite& s) {
  CT_CHECK(s.p >= 0.0f && s.p < 1.0f, "dropout: probability must be in [0, 1), got ", s.p);
}

}  // namespace

void dropout_forward(float* out, bf16* out_bf16, const float* inp, int64_t n, const DropoutSite& site) {
  check_site(site);
  if (site.p == 0.0f) {
    if (out != inp) std::memcpy(out, inp, sizeof(float) * n);
    if (out_bf16) f32_to_bf16(out, out_bf16, n);
    return;
  }
  const int64_t nchunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (nchunks > 1)
  for (int64_t c = 0; c < nchunks; ++c) {
    const int64_t b = c * kChunk, e = b + kChunk < n ? b + kChunk : n;
    for_each_dropout(site.seed, site.stream, site.offset, site.p, b, e, [&](int64_t i, float s) {
      out[i] = inp[i] * s;
      if (out_bf16) out_bf16[i] = to_bf16(out[i]);
    });
  }
}

void dropout_backward(float* dinp, const float* dout, int64_t n, const DropoutSite& site) {
  check_site(site);
  if (site.p == 0.0f) {
#pragma omp parallel for simd schedule(static) if (n > 16384)
    for (int64_t i = 0; i < n; ++i) dinp[i] += dout[i];
    return;
  }
  const int64_t nchunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (nchunks > 1)
  for (int64_t c = 0; c < nchunks; ++c) {
    const int64_t b = c * kChunk, e = b + kChunk < n ? b + kChunk : n;
    for_each_dropout(site.seed, site.stream, site.offset, site.p, b, e,
                     [&](int64_t i, float s) { dinp[i] += dout[i] * s; });
  }
}

void dropout_mask_reference(uint8_t* keep, int64_t n, const DropoutSite& site) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t word = dropout_word(site.seed, site.stream, site.offset + static_cast<uint64_t>(i));
    keep[i] = site.p == 0.0f || u32_to_unit_float(word) >= site.p;
  }
}

}  // namespace ct::kernels

#include "kernels/disentangled_attention.h"

#include "kernels/relative_position.h"

namespace ct::kernels {

void disentangled_bias_forward(float* scores, int64_t ld_scores, const float* c2p, const float* p2c,
                               int64_t ld_pos, const int32_t* buckets, int64_t T, int32_t span,
                               float inv_scale, int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < i1; ++i) {
    float* s = scores + i * ld_scores;
    // The bucket of (i, j) is buckets[i - j + T - 1]: walking j forward walks the table backward.
    const int32_t* b = buckets + i + T - 1;
    if (c2p) {
      const float* q = c2p + i * ld_pos;
      for (int64_t j = 0; j < T; ++j) s[j] += q[c2p_row(b[-j], span)] * inv_scale;
    }
    if (p2c)
      for (int64_t j = 0; j < T; ++j) s[j] += p2c[j * ld_pos + c2p_row(b[-j], span)] * inv_scale;
  }
}

void disentangled_bias_backward(float* dc2p, float* dp2c, int64_t ld_pos, const float* dscores,
                                int64_t ld_scores, const int32_t* buckets, int64_t T, int32_t span,
                                float inv_scale) {
  for (int64_t i = 0; i < T; ++i) {
    const float* ds = dscores + i * ld_scores;
    const int32_t* b = buckets + i + T - 1;
    if (dc2p) {
      float* dq = dc2p + i * ld_pos;
      for (int64_t j = 0; j < T; ++j) dq[c2p_row(b[-j], span)] += ds[j] * inv_scale;
    }
    if (dp2c)
      for (int64_t j = 0; j < T; ++j) dp2c[j * ld_pos + c2p_row(b[-j], span)] += ds[j] * inv_scale;
  }
}

}  // namespace ct::kernels

// DeBERTa-v2/v3's disentangled attention bias, one (batch, head) score block at a time: to each content score
// q_i . k_j it adds the content-to-position term q_i . Kr[row] and the position-to-content term k_j .
// Qr[row], row = clamp(bucket(i - j) + span) of the relative embeddings projected by the key (Kr) and query
// (Qr) projections, each divided by sqrt(head_dim * (1 + number of position terms)) as transformers scales
// them.
//
// transformers gathers from [B, heads, T, 2 span] products through a [T, T] index per head. Here the caller
// computes C2P = Q Kr^T and P2C = K Qr^T (two [T, 2 span] matmuls per head, the only dense work), and these
// kernels read them through the bucket table of distances (i - j depends on the diagonal only), so nothing
// T x T besides the scores themselves is built, forward or backward.
//
// The forward takes a range of rows so that callers can split one head over threads (twelve heads on sixteen
// cores would leave four idle); rows are independent, so a split changes no bit.
#pragma once

#include <cstdint>

namespace ct::kernels {

// scores[i * ld_scores + j] += (c2p[i * ld_pos + row] + p2c[j * ld_pos + row]) * inv_scale for i0 <= i < i1,
// j < T, row = clamp(buckets[i - j + T - 1] + span). c2p or p2c may be null (pos_att_type without that term).
void disentangled_bias_forward(float* scores, int64_t ld_scores, const float* c2p, const float* p2c,
                               int64_t ld_pos, const int32_t* buckets, int64_t T, int32_t span,
                               float inv_scale, int64_t i0, int64_t i1);

// The adjoint: dc2p[i, row] += dscores[i, j] * inv_scale and dp2c[j, row] += dscores[i, j] * inv_scale (ADDS;
// either may be null).
void disentangled_bias_backward(float* dc2p, float* dp2c, int64_t ld_pos, const float* dscores,
                                int64_t ld_scores, const int32_t* buckets, int64_t T, int32_t span,
                                float inv_scale);

}  // namespace ct::kernels

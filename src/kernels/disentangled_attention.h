// DeBERTa-v2/v3's disentangled attention bias, one (batch, head) score block at a time: to each content score
// q_i . k_j it adds the content-to-position term q_i . Kr[row] and the position-to-content term k_j .
// Qr[row], row = clamp(bucket(i - j) + span) of the relative embeddings projected by the key (Kr) and query
// (Qr) projections, each divided by sqrt(head_dim * (1 + number of position terms)) as transformers scales
// them.
//
// transformers gathers from [B, heads, T, 2 span] products through a [T, T] index per head. Here the caller
// computes C2P = Q Kr^T and P2C = K Qr^T (two [T, 2 span] matmuls per head, the only dense work), and these
// kernels read them through the row of each diagonal (i - j decides the row), so nothing T x T besides the
// scores themselves is built, forward or backward.
//
// Walking a query's keys walks the diagonals one by one, so the rows it reads form stretches: near the
// diagonal (|i - j| up to half the buckets) each key reads the row before the last one's, a reversed
// contiguous run that vectorizes; farther out the log buckets repeat rows, and sixteen reads that fall within
// sixteen floats of a row take one vector load and an in-register permute (one load each where the buckets
// step further). A plan holds that index and its stretches for one sequence length.
//
// The forward takes a range of rows so that callers can split one head over threads (twelve heads on sixteen
// cores would leave four idle); rows are independent, so a split changes no bit.
#pragma once

#include <cstdint>
#include <vector>

namespace ct::kernels {

struct DisentangledPlan {
  int64_t T = 0;
  int32_t lo = 0, hi = -1;    // the band of rows any pair reads: [lo, hi]
  std::vector<int32_t> rows;  // rows[k]: the row of query i and key j where k = T - 1 - i + j
  // The key range [0, 2T - 1) of rows[] cut into pieces: a stretch (rows[k + 1] = rows[k] - 1 throughout,
  // at least kMinStretch long) or an indexed piece (anything else).
  std::vector<int32_t> piece_start, piece_len, piece_of;  // piece_of[k]: the piece holding k
  std::vector<uint8_t> stretch;
  // rows[] never rises with k (log buckets grow with the distance). Then sixteen consecutive reads (c2p's
  // keys of one query, p2c's queries of one key) lie within sixteen floats wherever the buckets step by at
  // most one, and go through a vector load and an in-register permute instead of one load each.
  bool monotone = false;
};

// The plan of a T-token sequence: buckets as relative_position_buckets(T, ...) gives them (distance + T - 1).
DisentangledPlan disentangled_plan(const int32_t* buckets, int64_t T, int32_t span);

// scores[i * ld_scores + j] += c2p[i * ld_pos + row] * inv_scale, then += p2c[j * ld_pos + row] * inv_scale,
// for i0 <= i < i1, j < T, row = plan.rows[T - 1 - i + j]. c2p or p2c may be null (pos_att_type without that
// term).
void disentangled_bias_forward(float* scores, int64_t ld_scores, const float* c2p, const float* p2c,
                               int64_t ld_pos, const DisentangledPlan& plan, float inv_scale, int64_t i0,
                               int64_t i1);

// The adjoint, written over the band [plan.lo, plan.hi] of every row of dc2p and dp2c (the rest of a row is
// left as it is): dc2p[i, row] = sum over j of dscores[i, j] * inv_scale, dp2c[j, row] = sum over i, each sum
// in ascending order. Either may be null.
void disentangled_bias_backward(float* dc2p, float* dp2c, int64_t ld_pos, const float* dscores,
                                int64_t ld_scores, const DisentangledPlan& plan, float inv_scale);

}  // namespace ct::kernels

// DeBERTa-v2/v3's relative positions: the distance of query i to key j (i - j), log-bucketed as transformers'
// make_log_bucket_position computes it (distances within bucket_size / 2 kept, longer ones compressed
// logarithmically up to max_position, torch's f32 arithmetic), and the row of the relative embedding table
// that content-to-position and position-to-content attention read for it (clamped to the 2 * span rows).
#pragma once

#include <cstdint>
#include <vector>

namespace ct::kernels {

// make_log_bucket_position for one distance; the distance itself when bucket_size or max_position is <= 0
// (transformers then skips bucketing).
int32_t log_bucket_position(int64_t distance, int64_t bucket_size, int64_t max_position);

// Buckets of every distance -(T-1) .. T-1 of a T-token sequence, indexed by distance + T - 1: what the
// attention kernel needs instead of a T x T index matrix (the bucket depends on i - j only).
std::vector<int32_t> relative_position_buckets(int64_t T, int64_t bucket_size, int64_t max_position);

// Rows of the [2 * span, H] relative embeddings that content-to-position (c2p) and position-to-content (p2c)
// attention gather: c2p_row of the bucket of query-to-key distance i - j is clamp(bucket + span) into
// [0, 2 span); p2c_row takes the bucket of key-to-query distance j - i (transformers' r_pos) and gives
// clamp(span - bucket), which by the buckets' odd symmetry is the same row.
inline int32_t c2p_row(int32_t bucket, int32_t span) {
  const int32_t r = bucket + span;
  return r < 0 ? 0 : r >= 2 * span ? 2 * span - 1 : r;
}
inline int32_t p2c_row(int32_t bucket, int32_t span) {
  return c2p_row(-bucket, span);
}

}  // namespace ct::kernels

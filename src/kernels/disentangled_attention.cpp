#include "kernels/disentangled_attention.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "kernels/relative_position.h"

namespace ct::kernels {
namespace {

// Shorter stretches go through the index: a piece costs a branch and a loop set-up.
constexpr int64_t kMinStretch = 16;

// p2c's term for query i and key j sits in p2c's row j: the forward gathers a block of queries key by key
// (one p2c row in L1 at a time) into a tile, then adds the tile's rows; the backward scatters the same way.
constexpr int64_t kQueryBlock = 16;

// A tile row of T floats plus one cache line, so that the block's rows do not share L1 sets (rows of 512
// floats are 2 KB apart).
int64_t tile_stride(int64_t T) {
  return T + 16;
}

// Compiled scalar on purpose: vectorized, these become gathers / scatters, slower than scalar loads on the
// CPUs measured (Zen 4).
__attribute__((optimize("no-tree-vectorize"))) void indexed_add(float* out, const float* src,
                                                                const int32_t* rows, int64_t n, float scale) {
  for (int64_t t = 0; t < n; ++t) out[t] += src[rows[t]] * scale;
}

__attribute__((optimize("no-tree-vectorize"))) void indexed_scatter(float* out, const float* src,
                                                                    const int32_t* rows, int64_t n,
                                                                    float scale) {
  for (int64_t t = 0; t < n; ++t) out[rows[t]] += src[t] * scale;
}

// out[j] += src[rows[kb + j]] * scale for j < T (a c2p row read along the query's diagonals).
void row_gather_add(float* out, const float* src, const DisentangledPlan& p, int64_t kb, float scale) {
  const int32_t* rows = p.rows.data();
  const int64_t ke = kb + p.T;
  for (int64_t pi = p.piece_of[kb], k = kb; k < ke; ++pi) {
    const int64_t e = std::min<int64_t>(p.piece_start[pi] + p.piece_len[pi], ke);
    float* o = out + (k - kb);
    if (p.stretch[pi]) {
      const float* s = src + rows[k];
#pragma omp simd
      for (int64_t t = 0; t < e - k; ++t) o[t] += s[-t] * scale;
    } else {
      indexed_add(o, src, rows + k, e - k, scale);
    }
    k = e;
  }
}

// The adjoint of row_gather_add: out[rows[kb + j]] += src[j] * scale, in ascending j.
void row_scatter_add(float* out, const float* src, const DisentangledPlan& p, int64_t kb, float scale) {
  const int32_t* rows = p.rows.data();
  const int64_t ke = kb + p.T;
  for (int64_t pi = p.piece_of[kb], k = kb; k < ke; ++pi) {
    const int64_t e = std::min<int64_t>(p.piece_start[pi] + p.piece_len[pi], ke);
    const float* x = src + (k - kb);
    if (p.stretch[pi]) {
      float* o = out + rows[k];
#pragma omp simd
      for (int64_t t = 0; t < e - k; ++t) o[-t] += x[t] * scale;
    } else {
      indexed_scatter(out, x, rows + k, e - k, scale);
    }
    k = e;
  }
}

// tile[t * ts + j] = p2c[j, rows[T - 1 - (b0 + t) + j]] for t < n, j < T.
__attribute__((optimize("no-tree-vectorize"))) void p2c_tile(float* tile, int64_t ts, const float* p2c,
                                                             int64_t ld_pos, const int32_t* rows, int64_t T,
                                                             int64_t b0, int64_t n) {
  for (int64_t j = 0; j < T; ++j) {
    const float* pr = p2c + j * ld_pos;
    const int32_t* r = rows + (T - 1 - b0 + j);  // query b0 + t reads r[-t]
    for (int64_t t = 0; t < n; ++t) tile[t * ts + j] = pr[r[-t]];
  }
}

// dp2c[j, rows[T - 1 - (b0 + t) + j]] += dscores[b0 + t, j] * scale for j < T, t < n, in ascending t.
__attribute__((optimize("no-tree-vectorize"))) void p2c_scatter(float* dp2c, int64_t ld_pos,
                                                                const float* dscores, int64_t ld_scores,
                                                                const int32_t* rows, int64_t T, int64_t b0,
                                                                int64_t n, float scale) {
  for (int64_t j = 0; j < T; ++j) {
    float* d = dp2c + j * ld_pos;
    const int32_t* r = rows + (T - 1 - b0 + j);
    const float* x = dscores + b0 * ld_scores + j;
    for (int64_t t = 0; t < n; ++t) d[r[-t]] += x[t * ld_scores] * scale;
  }
}

thread_local std::vector<float> t_tile;

}  // namespace

DisentangledPlan disentangled_plan(const int32_t* buckets, int64_t T, int32_t span) {
  CT_CHECK(T > 0 && span > 0, "disentangled attention: sequence length ", T, " and span ", span,
           " (expected both > 0)");
  DisentangledPlan p;
  p.T = T;
  const int64_t K = 2 * T - 1;
  p.rows.resize(static_cast<size_t>(K));
  p.lo = 2 * span;
  for (int64_t k = 0; k < K; ++k) {
    p.rows[k] = c2p_row(buckets[K - 1 - k], span);
    p.lo = std::min(p.lo, p.rows[k]);
    p.hi = std::max(p.hi, p.rows[k]);
  }
  p.piece_of.resize(static_cast<size_t>(K));
  const int32_t* r = p.rows.data();
  for (int64_t k = 0; k < K;) {
    int64_t e = k + 1;
    while (e < K && r[e] == r[e - 1] - 1) ++e;
    const bool is_stretch = e - k >= kMinStretch;
    if (!is_stretch) e = k + 1;
    if (!is_stretch && !p.stretch.empty() && !p.stretch.back()) {
      ++p.piece_len.back();
    } else {
      p.piece_start.push_back(static_cast<int32_t>(k));
      p.piece_len.push_back(static_cast<int32_t>(e - k));
      p.stretch.push_back(is_stretch);
    }
    for (int64_t q = k; q < e; ++q) p.piece_of[q] = static_cast<int32_t>(p.piece_start.size() - 1);
    k = e;
  }
  return p;
}

void disentangled_bias_forward(float* scores, int64_t ld_scores, const float* c2p, const float* p2c,
                               int64_t ld_pos, const DisentangledPlan& plan, float inv_scale, int64_t i0,
                               int64_t i1) {
  const int64_t T = plan.T, ts = tile_stride(T);
  const int32_t* rows = plan.rows.data();
  for (int64_t b0 = i0; b0 < i1; b0 += kQueryBlock) {
    const int64_t n = std::min(kQueryBlock, i1 - b0);
    float* tile = nullptr;
    if (p2c) {
      t_tile.resize(static_cast<size_t>(kQueryBlock * ts));
      tile = t_tile.data();
      p2c_tile(tile, ts, p2c, ld_pos, rows, T, b0, n);
    }
    for (int64_t t = 0; t < n; ++t) {
      const int64_t i = b0 + t;
      float* s = scores + i * ld_scores;
      if (c2p) row_gather_add(s, c2p + i * ld_pos, plan, T - 1 - i, inv_scale);
      if (p2c) {
        const float* tl = tile + t * ts;
#pragma omp simd
        for (int64_t j = 0; j < T; ++j) s[j] += tl[j] * inv_scale;
      }
    }
  }
}

void disentangled_bias_backward(float* dc2p, float* dp2c, int64_t ld_pos, const float* dscores,
                                int64_t ld_scores, const DisentangledPlan& plan, float inv_scale) {
  const int64_t T = plan.T, band = plan.hi - plan.lo + 1;
  const int32_t* rows = plan.rows.data();
  if (dc2p)
    for (int64_t i = 0; i < T; ++i) {
      float* dq = dc2p + i * ld_pos;
      std::memset(dq + plan.lo, 0, static_cast<size_t>(band) * sizeof(float));
      row_scatter_add(dq, dscores + i * ld_scores, plan, T - 1 - i, inv_scale);
    }
  if (dp2c) {
    for (int64_t j = 0; j < T; ++j)
      std::memset(dp2c + j * ld_pos + plan.lo, 0, static_cast<size_t>(band) * sizeof(float));
    // Key j's row takes query i's term at rows[T - 1 - i + j]; a block of queries at a time, so that row
    // stays in L1 while the block's column of dscores is read.
    for (int64_t b0 = 0; b0 < T; b0 += kQueryBlock)
      p2c_scatter(dp2c, ld_pos, dscores, ld_scores, rows, T, b0, std::min(kQueryBlock, T - b0), inv_scale);
  }
}

}  // namespace ct::kernels

#include "kernels/disentangled_attention.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "kernels/relative_position.h"
#include "kernels/vec16.h"

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

// out[t] += src[rows[k + t]] * scale for t < n: sixteen at a time as one permuted vector load where their
// rows lie within sixteen floats of the band (the log buckets repeat rows, so they mostly do).
void indexed_gather_add(float* out, const float* src, const DisentangledPlan& p, int64_t k, int64_t n,
                        float scale) {
  const int32_t* rows = p.rows.data();
  int64_t t = 0;
  if (p.monotone && p.hi - p.lo + 1 >= 16)
    for (; t + 16 <= n; t += 16) {
      const int32_t first = rows[k + t], last = rows[k + t + 15];  // rows fall with k
      if (first - last > 15) {
        indexed_add(out + t, src, rows + k + t, 16, scale);
        continue;
      }
      const int32_t lowest = std::min(last, p.hi - 15);
      const v16f v = permute(load16(src + lowest), load16(rows + k + t) - lowest);
      store16(out + t, load16(out + t) + v * scale);
    }
  indexed_add(out + t, src, rows + k + t, n - t, scale);
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
      indexed_gather_add(o, src, p, k, e - k, scale);
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

// Whether key j's P2C row can serve a full block of 16 queries (from b0) with one vector load: the block
// reads rows[k0 - t], t < 16, k0 = T - 1 - b0 + j, a non-decreasing run in t spanning at most 16 floats,
// inside the band when the band is 16 wide. `lowest` is the first of the 16 floats.
bool p2c_vector_ok(const DisentangledPlan& p, int64_t k0, int32_t& lowest) {
  if (!p.monotone || p.hi - p.lo + 1 < 16) return false;
  const int32_t first = p.rows[k0], last = p.rows[k0 - 15];
  if (last - first > 15) return false;
  lowest = std::min(first, p.hi - 15);
  return true;
}

// The forward's p2c term for a full block of 16 queries from b0, added to their score rows: key by key, the
// block's 16 terms (one permuted vector load from the key's P2C row), then 16 x 16 transposes so that each
// query's row gets vector adds.
void p2c_block_forward(float* scores, int64_t ld_scores, const float* p2c, int64_t ld_pos,
                       const DisentangledPlan& p, int64_t b0, float scale, float* cols) {
  const int64_t T = p.T;
  const int32_t* rows = p.rows.data();
  for (int64_t j = 0; j < T; ++j) {
    const int64_t k0 = T - 1 - b0 + j;
    const float* pr = p2c + j * ld_pos;
    float* out = cols + j * 16;  // out[t]: query b0 + t's term
    int32_t lowest = 0;
    if (p2c_vector_ok(p, k0, lowest)) {
      const v16i idx = reversed(load16(rows + k0 - 15)) - lowest;
      store16(out, permute(load16(pr + lowest), idx));
    } else {
      for (int64_t t = 0; t < 16; ++t) out[t] = pr[rows[k0 - t]];
    }
  }
  int64_t j0 = 0;
  for (; j0 + 16 <= T; j0 += 16) {
    v16f r[16];
    for (int q = 0; q < 16; ++q) r[q] = load16(cols + (j0 + q) * 16);
    transpose16(r);  // r[t]: query b0 + t's terms for keys j0 ..
    for (int t = 0; t < 16; ++t) {
      float* s = scores + (b0 + t) * ld_scores + j0;
      store16(s, load16(s) + r[t] * scale);
    }
  }
  for (int64_t t = 0; t < 16; ++t)
    for (int64_t j = j0; j < T; ++j) scores[(b0 + t) * ld_scores + j] += cols[j * 16 + t] * scale;
}

// The backward's p2c scatter for a full block of 16 queries from b0: dscores' 16 x 16 tiles transposed so
// that a key's 16 terms are one vector, added with one vector load and store where its 16 rows are 16
// consecutive ones (a stretch), one by one in query order elsewhere.
void p2c_block_backward(float* dp2c, int64_t ld_pos, const float* dscores, int64_t ld_scores,
                        const DisentangledPlan& p, int64_t b0, float scale) {
  const int64_t T = p.T;
  const int32_t* rows = p.rows.data();
  int64_t j0 = 0;
  for (; j0 + 16 <= T; j0 += 16) {
    v16f r[16];
    for (int t = 0; t < 16; ++t) r[t] = load16(dscores + (b0 + t) * ld_scores + j0);
    transpose16(r);  // r[q]: key j0 + q's terms from queries b0 ..
    for (int q = 0; q < 16; ++q) {
      const int64_t j = j0 + q, k0 = T - 1 - b0 + j;
      float* d = dp2c + j * ld_pos;
      int32_t lowest = 0;
      if (p2c_vector_ok(p, k0, lowest) && rows[k0 - 15] - rows[k0] == 15) {
        float* o = d + rows[k0];
        store16(o, load16(o) + r[q] * scale);
      } else {
        for (int t = 0; t < 16; ++t) d[rows[k0 - t]] += r[q][t] * scale;
      }
    }
  }
  if (j0 < T) {
    for (int64_t j = j0; j < T; ++j) {
      float* d = dp2c + j * ld_pos;
      const int32_t* rk = rows + (T - 1 - b0 + j);
      for (int64_t t = 0; t < 16; ++t) d[rk[-t]] += dscores[(b0 + t) * ld_scores + j] * scale;
    }
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
  p.monotone = std::is_sorted(p.rows.rbegin(), p.rows.rend());
  return p;
}

void disentangled_bias_forward(float* scores, int64_t ld_scores, const float* c2p, const float* p2c,
                               int64_t ld_pos, const DisentangledPlan& plan, float inv_scale, int64_t i0,
                               int64_t i1) {
  const int64_t T = plan.T, ts = tile_stride(T);
  const int32_t* rows = plan.rows.data();
  for (int64_t b0 = i0; b0 < i1; b0 += kQueryBlock) {
    const int64_t n = std::min(kQueryBlock, i1 - b0);
    if (n == kQueryBlock && p2c) {
      if (c2p)
        for (int64_t i = b0; i < b0 + n; ++i)
          row_gather_add(scores + i * ld_scores, c2p + i * ld_pos, plan, T - 1 - i, inv_scale);
      t_tile.resize(static_cast<size_t>(16 * T));
      p2c_block_forward(scores, ld_scores, p2c, ld_pos, plan, b0, inv_scale, t_tile.data());
      continue;
    }
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
    for (int64_t b0 = 0; b0 < T; b0 += kQueryBlock) {
      if (b0 + kQueryBlock <= T)
        p2c_block_backward(dp2c, ld_pos, dscores, ld_scores, plan, b0, inv_scale);
      else
        p2c_scatter(dp2c, ld_pos, dscores, ld_scores, rows, T, b0, T - b0, inv_scale);
    }
  }
}

}  // namespace ct::kernels

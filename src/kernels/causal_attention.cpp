#include "kernels/causal_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/bf16.h"
#include "core/error.h"
#include "kernels/gemm.h"
#include "kernels/vec_math.h"

namespace ct::kernels {

namespace {

constexpr int64_t kBr = 64;  // queries per tile and head
constexpr int64_t kBc = 64;  // keys per tile
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Layout {
  int64_t NH, NKV, G, HS, ld_q, ld_kv, W;
  float scale;
};

Layout layout_of(const CausalAttentionDims& d) {
  CT_CHECK(d.NH > 0 && d.NKV > 0 && d.HS > 0 && d.NH % d.NKV == 0, "causal attention: heads ", d.NH,
           " / kv heads ", d.NKV, " / head size ", d.HS,
           " (query heads must be a positive multiple of kv heads)");
  CT_CHECK(d.window >= 0, "causal attention: window ", d.window, " is negative");
  Layout l;
  l.NH = d.NH;
  l.NKV = d.NKV;
  l.G = d.NH / d.NKV;
  l.HS = d.HS;
  l.ld_q = d.ld_q ? d.ld_q : d.NH * d.HS;
  l.ld_kv = d.ld_kv ? d.ld_kv : d.NKV * d.HS;
  CT_CHECK(l.ld_q >= d.NH * d.HS && l.ld_kv >= d.NKV * d.HS, "causal attention: row stride below the heads");
  l.W = d.window;
  l.scale = d.scale != 0.0f ? d.scale : 1.0f / std::sqrt(static_cast<float>(d.HS));
  return l;
}

// Row `r`, columns [col, col + n) of a buffer of type dt, widened into dst.
void load_row(float* dst, const void* base, DType dt, int64_t r, int64_t ld, int64_t col, int64_t n) {
  if (dt == DType::f32) {
    const float* s = static_cast<const float*>(base) + r * ld + col;
    std::copy(s, s + n, dst);
  } else {
    bf16_to_f32(static_cast<const bf16*>(base) + r * ld + col, dst, n);
  }
}

// Rows [r0, r0 + n) of one head into a dense [rows, HS] tile, zero past n.
void load_tile(float* dst, int64_t rows, const void* base, DType dt, int64_t r0, int64_t n, int64_t ld,
               int64_t col, int64_t HS) {
  for (int64_t r = 0; r < rows; ++r) {
    if (r < n)
      load_row(dst + r * HS, base, dt, r0 + r, ld, col, HS);
    else
      std::fill(dst + r * HS, dst + (r + 1) * HS, 0.0f);
  }
}

// Key tile [j0, j0 + kBc) of kv head `kv` of the sequence starting at row `start`: K and V, zero past `len`.
void load_keys(float* K, float* V, const void* k, const void* v, DType dt, int64_t start, int64_t j0,
               int64_t len, const Layout& l, int64_t kv) {
  const int64_t nk = std::min(kBc, len - j0);
  load_tile(K, kBc, k, dt, start + j0, nk, l.ld_kv, kv * l.HS, l.HS);
  load_tile(V, kBc, v, dt, start + j0, nk, l.ld_kv, kv * l.HS, l.HS);
}

// C (+)= op(A) op(B) on dense tiles, on the calling thread.
void tile_product(int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b, const float* a, const float* b,
                  float* c, bool accumulate) {
  Gemm g;
  g.M = M;
  g.N = N;
  g.K = K;
  g.trans_a = trans_a;
  g.trans_b = trans_b;
  g.accumulate = accumulate;
  g.quantize_shape = false;  // tiles have a few fixed shapes
  gemm(g, a, b, c);
}

// Key j is visible from query i of the same sequence (length len).
inline bool visible(int64_t i, int64_t j, int64_t W) {
  return j <= i && (W == 0 || j > i - W);
}

// The key tiles query tile qb reads: [lo, hi].
void key_tiles(int64_t qb, int64_t n_rows, int64_t W, int64_t& lo, int64_t& hi) {
  const int64_t i0 = qb * kBr, i1 = std::min(n_rows, i0 + kBr);
  hi = (i1 - 1) / kBc;
  lo = W ? std::max<int64_t>(0, i0 - W + 1) / kBc : 0;
}

// The query tiles that read key tile kb: [lo, hi].
void query_tiles(int64_t kb, int64_t n_rows, int64_t W, int64_t& lo, int64_t& hi) {
  const int64_t j0 = kb * kBc, j1 = std::min(n_rows, j0 + kBc);
  lo = j0 / kBr;
  const int64_t last = W ? std::min(n_rows - 1, j1 - 1 + W - 1) : n_rows - 1;
  hi = last / kBr;
}

struct Task {
  int64_t seq, kv, tile;
  int64_t work;  // partner tiles it visits
};

// Query tiles (by_queries) or key tiles with the partner tiles each visits, largest first: the causal
// triangle makes the last query tiles (and the first key tiles) the long ones, and dynamic scheduling
// balances only when those start first.
std::vector<Task> tasks_of(const int64_t* seq_len, int64_t n_seqs, int64_t NKV, int64_t W, bool by_queries) {
  std::vector<Task> t;
  for (int64_t s = 0; s < n_seqs; ++s) {
    CT_CHECK(seq_len[s] >= 0, "causal attention: sequence ", s, " has negative length ", seq_len[s]);
    const int64_t rows = by_queries ? kBr : kBc;
    for (int64_t b = 0; b * rows < seq_len[s]; ++b) {
      int64_t lo, hi;
      if (by_queries)
        key_tiles(b, seq_len[s], W, lo, hi);
      else
        query_tiles(b, seq_len[s], W, lo, hi);
      for (int64_t kv = 0; kv < NKV; ++kv) t.push_back({s, kv, b, hi - lo + 1});
    }
  }
  std::stable_sort(t.begin(), t.end(), [](const Task& a, const Task& b) { return a.work > b.work; });
  return t;
}

// True when every key of tile [j0, j0 + kBc) is visible from every query of [i0, i0 + n) of a sequence of
// `len` rows: the tile needs no mask.
inline bool tile_unmasked(int64_t i0, int64_t n, int64_t j0, int64_t len, int64_t W) {
  const int64_t j_last = j0 + kBc - 1, i_last = i0 + n - 1;
  return j_last < len && j_last <= i0 && (W == 0 || j0 > i_last - W);
}

// Scores of one [G * kBr, kBc] tile turned into probabilities: P = exp(scale * S - lse) where visible, else 0
// (backward's recomputation from the saved log-sum-exp).
void probs_from_lse(float* S, const float* lse_tile, int64_t i0, int64_t j0, int64_t n_rows,
                    const Layout& l) {
  const int64_t n = std::min(kBr, n_rows - i0);
  const bool unmasked = tile_unmasked(i0, n, j0, n_rows, l.W);
  for (int64_t hh = 0; hh < l.G; ++hh) {
    for (int64_t r = 0; r < kBr; ++r) {
      float* row = S + (hh * kBr + r) * kBc;
      const int64_t i = i0 + r;
      if (r >= n) {
        std::fill(row, row + kBc, 0.0f);
        continue;
      }
      const float m = lse_tile[hh * kBr + r], scale = l.scale;
      if (unmasked) {
#pragma omp simd
        for (int64_t c = 0; c < kBc; ++c) row[c] = fast_exp(row[c] * scale - m);
        continue;
      }
      // Visible keys of this row: [lo, hi) of the tile's columns.
      const int64_t lo = std::clamp<int64_t>(l.W ? i - l.W + 1 - j0 : 0, 0, kBc);
      const int64_t hi = std::clamp<int64_t>(std::min(i, n_rows - 1) + 1 - j0, 0, kBc);
#pragma omp simd
      for (int64_t c = 0; c < kBc; ++c) {
        const float p = fast_exp(row[c] * scale - m);
        row[c] = c >= lo && c < hi ? p : 0.0f;
      }
    }
  }
}

}  // namespace

void causal_attention_forward(void* out, float* lse, const void* q, const void* k, const void* v,
                              const int64_t* seq_start, const int64_t* seq_len, const CausalAttentionDims& d,
                              DType dt) {
  const Layout l = layout_of(d);
  const std::vector<Task> tasks = tasks_of(seq_len, d.n_seqs, l.NKV, l.W, true);
  const int64_t M = l.G * kBr, HS = l.HS;
#pragma omp parallel
  {
    std::vector<float> Q(M * HS), K(kBc * HS), V(kBc * HS), S(M * kBc), O(M * HS), m(M), sum(M), orow(HS);
#pragma omp for schedule(dynamic, 1)
    for (size_t t = 0; t < tasks.size(); ++t) {
      const Task& task = tasks[t];
      const int64_t start = seq_start[task.seq], len = seq_len[task.seq];
      const int64_t i0 = task.tile * kBr, n = std::min(kBr, len - i0);
      for (int64_t hh = 0; hh < l.G; ++hh)
        load_tile(Q.data() + hh * kBr * HS, kBr, q, dt, start + i0, n, l.ld_q, (task.kv * l.G + hh) * HS, HS);
      std::fill(O.begin(), O.end(), 0.0f);
      std::fill(m.begin(), m.end(), kNegInf);
      std::fill(sum.begin(), sum.end(), 0.0f);
      int64_t lo, hi;
      key_tiles(task.tile, len, l.W, lo, hi);
      for (int64_t kb = lo; kb <= hi; ++kb) {
        const int64_t j0 = kb * kBc;
        load_keys(K.data(), V.data(), k, v, dt, start, j0, len, l, task.kv);
        tile_product(M, kBc, HS, false, true, Q.data(), K.data(), S.data(), false);
        const bool unmasked = tile_unmasked(i0, n, j0, len, l.W);
        for (int64_t row = 0; row < M; ++row) {
          float* s = S.data() + row * kBc;
          const int64_t i = i0 + row % kBr;
          // Visible keys of this row: columns [lo, hi) (none for a padding row of the tile).
          const int64_t lo = unmasked ? 0 : std::clamp<int64_t>(l.W ? i - l.W + 1 - j0 : 0, 0, kBc);
          const int64_t hi = unmasked        ? kBc
                             : row % kBr < n ? std::clamp<int64_t>(std::min(i, len - 1) + 1 - j0, 0, kBc)
                                             : 0;
          float mx = kNegInf;
          const float scale = l.scale;
#pragma omp simd reduction(max : mx)
          for (int64_t c = 0; c < kBc; ++c) {
            s[c] = c >= lo && c < hi ? s[c] * scale : kNegInf;
            mx = std::max(mx, s[c]);
          }
          const float m_new = std::max(m[row], mx);
          if (m_new == kNegInf) {  // nothing visible yet in this row
            std::fill(s, s + kBc, 0.0f);
            continue;
          }
          const float alpha = m[row] == kNegInf ? 0.0f : fast_exp(m[row] - m_new);
          float add = 0.0f;
#pragma omp simd reduction(+ : add)
          for (int64_t c = 0; c < kBc; ++c) {
            const float p = s[c] == kNegInf ? 0.0f : fast_exp(s[c] - m_new);
            s[c] = p;
            add += p;
          }
          sum[row] = sum[row] * alpha + add;
          m[row] = m_new;
          if (alpha != 1.0f) {
            float* o = O.data() + row * HS;
            for (int64_t e = 0; e < HS; ++e) o[e] *= alpha;
          }
        }
        tile_product(M, HS, kBc, false, false, S.data(), V.data(), O.data(), true);
      }
      for (int64_t hh = 0; hh < l.G; ++hh) {
        const int64_t h = task.kv * l.G + hh;
        for (int64_t r = 0; r < n; ++r) {
          const int64_t row = hh * kBr + r, grow = start + i0 + r;
          const float inv = 1.0f / sum[row];
          for (int64_t e = 0; e < HS; ++e) orow[e] = O[row * HS + e] * inv;
          if (dt == DType::f32)
            std::copy(orow.begin(), orow.end(), static_cast<float*>(out) + grow * l.ld_q + h * HS);
          else
            f32_to_bf16(orow.data(), static_cast<bf16*>(out) + grow * l.ld_q + h * HS, HS);
          lse[grow * l.NH + h] = m[row] + std::log(sum[row]);
        }
      }
    }
  }
}

void causal_attention_backward(float* dq, float* dk, float* dv, const float* dout, const void* q,
                               const void* k, const void* v, const void* out, const float* lse,
                               const int64_t* seq_start, const int64_t* seq_len, const CausalAttentionDims& d,
                               DType dt) {
  const Layout l = layout_of(d);
  const int64_t M = l.G * kBr, HS = l.HS;
  // D[row, h] = dout . out: the softmax backward's row term, once per row and head for both passes.
  int64_t rows = 0;
  for (int64_t s = 0; s < d.n_seqs; ++s) rows = std::max(rows, seq_start[s] + seq_len[s]);
  std::vector<float> D(rows * l.NH, 0.0f);
  std::vector<int64_t> span_rows;  // every row of every span, so the pass splits over rows, not sequences
  for (int64_t s = 0; s < d.n_seqs; ++s)
    for (int64_t r = seq_start[s]; r < seq_start[s] + seq_len[s]; ++r) span_rows.push_back(r);
#pragma omp parallel
  {
    std::vector<float> orow(HS);
#pragma omp for schedule(static)
    for (size_t k = 0; k < span_rows.size(); ++k) {
      const int64_t r = span_rows[k];
      for (int64_t h = 0; h < l.NH; ++h) {
        load_row(orow.data(), out, dt, r, l.ld_q, h * HS, HS);
        const float* g = dout + r * l.ld_q + h * HS;
        float acc = 0.0f;
        for (int64_t e = 0; e < HS; ++e) acc += g[e] * orow[e];
        D[r * l.NH + h] = acc;
      }
    }
  }
  // Loads a query tile: Q, dO, lse and D of the group's heads.
  auto load_queries = [&](const Task& task, int64_t qb, float* Q, float* dO, float* lse_t, float* D_t) {
    const int64_t start = seq_start[task.seq], len = seq_len[task.seq];
    const int64_t i0 = qb * kBr, n = std::min(kBr, len - i0);
    for (int64_t hh = 0; hh < l.G; ++hh) {
      const int64_t h = task.kv * l.G + hh;
      load_tile(Q + hh * kBr * HS, kBr, q, dt, start + i0, n, l.ld_q, h * HS, HS);
      load_tile(dO + hh * kBr * HS, kBr, dout, DType::f32, start + i0, n, l.ld_q, h * HS, HS);
      for (int64_t r = 0; r < kBr; ++r) {
        lse_t[hh * kBr + r] = r < n ? lse[(start + i0 + r) * l.NH + h] : 0.0f;
        D_t[hh * kBr + r] = r < n ? D[(start + i0 + r) * l.NH + h] : 0.0f;
      }
    }
  };
  // dS = P * (dP - D), in place in dP.
  auto softmax_backward = [&](const float* P, float* dP, const float* D_t) {
    for (int64_t row = 0; row < M; ++row) {
      const float Dr = D_t[row];
#pragma omp simd
      for (int64_t c = 0; c < kBc; ++c) dP[row * kBc + c] = P[row * kBc + c] * (dP[row * kBc + c] - Dr);
    }
  };

  // Pass 1: dQ, one task per query tile (it owns those rows of dq).
  const std::vector<Task> qtasks = tasks_of(seq_len, d.n_seqs, l.NKV, l.W, true);
#pragma omp parallel
  {
    std::vector<float> Q(M * HS), dO(M * HS), K(kBc * HS), V(kBc * HS), P(M * kBc), dP(M * kBc), dQ(M * HS),
        lse_t(M), D_t(M);
#pragma omp for schedule(dynamic, 1)
    for (size_t t = 0; t < qtasks.size(); ++t) {
      const Task& task = qtasks[t];
      const int64_t start = seq_start[task.seq], len = seq_len[task.seq];
      const int64_t i0 = task.tile * kBr, n = std::min(kBr, len - i0);
      load_queries(task, task.tile, Q.data(), dO.data(), lse_t.data(), D_t.data());
      std::fill(dQ.begin(), dQ.end(), 0.0f);
      int64_t lo, hi;
      key_tiles(task.tile, len, l.W, lo, hi);
      for (int64_t kb = lo; kb <= hi; ++kb) {
        const int64_t j0 = kb * kBc;
        load_keys(K.data(), V.data(), k, v, dt, start, j0, len, l, task.kv);
        tile_product(M, kBc, HS, false, true, Q.data(), K.data(), P.data(), false);
        probs_from_lse(P.data(), lse_t.data(), i0, j0, len, l);
        tile_product(M, kBc, HS, false, true, dO.data(), V.data(), dP.data(), false);
        softmax_backward(P.data(), dP.data(), D_t.data());
        tile_product(M, HS, kBc, false, false, dP.data(), K.data(), dQ.data(), true);
      }
      for (int64_t hh = 0; hh < l.G; ++hh) {
        const int64_t h = task.kv * l.G + hh;
        for (int64_t r = 0; r < n; ++r) {
          float* g = dq + (start + i0 + r) * l.ld_q + h * HS;
          const float* src = dQ.data() + (hh * kBr + r) * HS;
          for (int64_t e = 0; e < HS; ++e) g[e] += l.scale * src[e];
        }
      }
    }
  }

  // Pass 2: dK and dV, one task per key tile (it owns those rows of dk and dv).
  const std::vector<Task> ktasks = tasks_of(seq_len, d.n_seqs, l.NKV, l.W, false);
#pragma omp parallel
  {
    std::vector<float> Q(M * HS), dO(M * HS), K(kBc * HS), V(kBc * HS), P(M * kBc), dP(M * kBc), dK(kBc * HS),
        dV(kBc * HS), lse_t(M), D_t(M);
#pragma omp for schedule(dynamic, 1)
    for (size_t t = 0; t < ktasks.size(); ++t) {
      const Task& task = ktasks[t];
      const int64_t start = seq_start[task.seq], len = seq_len[task.seq];
      const int64_t j0 = task.tile * kBc, nk = std::min(kBc, len - j0);
      load_keys(K.data(), V.data(), k, v, dt, start, j0, len, l, task.kv);
      std::fill(dK.begin(), dK.end(), 0.0f);
      std::fill(dV.begin(), dV.end(), 0.0f);
      int64_t lo, hi;
      query_tiles(task.tile, len, l.W, lo, hi);
      for (int64_t qb = lo; qb <= hi; ++qb) {
        load_queries(task, qb, Q.data(), dO.data(), lse_t.data(), D_t.data());
        tile_product(M, kBc, HS, false, true, Q.data(), K.data(), P.data(), false);
        probs_from_lse(P.data(), lse_t.data(), qb * kBr, j0, len, l);
        tile_product(kBc, HS, M, true, false, P.data(), dO.data(), dV.data(), true);
        tile_product(M, kBc, HS, false, true, dO.data(), V.data(), dP.data(), false);
        softmax_backward(P.data(), dP.data(), D_t.data());
        tile_product(kBc, HS, M, true, false, dP.data(), Q.data(), dK.data(), true);
      }
      for (int64_t c = 0; c < nk; ++c) {
        float* gk = dk + (start + j0 + c) * l.ld_kv + task.kv * HS;
        float* gv = dv + (start + j0 + c) * l.ld_kv + task.kv * HS;
        for (int64_t e = 0; e < HS; ++e) {
          gk[e] += l.scale * dK[c * HS + e];
          gv[e] += dV[c * HS + e];
        }
      }
    }
  }
}

void causal_attention_forward_reference(float* out, const float* q, const float* k, const float* v,
                                        const int64_t* seq_start, const int64_t* seq_len,
                                        const CausalAttentionDims& d) {
  const Layout l = layout_of(d);
  std::vector<double> p;
  for (int64_t s = 0; s < d.n_seqs; ++s) {
    const int64_t st = seq_start[s], len = seq_len[s];
    p.assign(len, 0.0);
    for (int64_t h = 0; h < l.NH; ++h) {
      const int64_t kv = h / l.G;
      for (int64_t i = 0; i < len; ++i) {
        double mx = -1e300, z = 0.0;
        for (int64_t j = 0; j < len; ++j) {
          if (!visible(i, j, l.W)) continue;
          double sc = 0.0;
          for (int64_t e = 0; e < l.HS; ++e)
            sc += static_cast<double>(q[(st + i) * l.ld_q + h * l.HS + e]) *
                  k[(st + j) * l.ld_kv + kv * l.HS + e];
          p[j] = sc * l.scale;
          mx = std::max(mx, p[j]);
        }
        for (int64_t j = 0; j < len; ++j)
          if (visible(i, j, l.W)) z += (p[j] = std::exp(p[j] - mx));
        for (int64_t e = 0; e < l.HS; ++e) {
          double acc = 0.0;
          for (int64_t j = 0; j < len; ++j)
            if (visible(i, j, l.W)) acc += p[j] / z * v[(st + j) * l.ld_kv + kv * l.HS + e];
          out[(st + i) * l.ld_q + h * l.HS + e] = static_cast<float>(acc);
        }
      }
    }
  }
}

void causal_attention_backward_reference(float* dq, float* dk, float* dv, const float* dout, const float* q,
                                         const float* k, const float* v, const int64_t* seq_start,
                                         const int64_t* seq_len, const CausalAttentionDims& d) {
  const Layout l = layout_of(d);
  std::vector<double> p, dp;
  for (int64_t s = 0; s < d.n_seqs; ++s) {
    const int64_t st = seq_start[s], len = seq_len[s];
    p.assign(len, 0.0);
    dp.assign(len, 0.0);
    for (int64_t h = 0; h < l.NH; ++h) {
      const int64_t kv = h / l.G;
      auto Q = [&](int64_t i, int64_t e) { return static_cast<double>(q[(st + i) * l.ld_q + h * l.HS + e]); };
      auto K = [&](int64_t j, int64_t e) {
        return static_cast<double>(k[(st + j) * l.ld_kv + kv * l.HS + e]);
      };
      auto V = [&](int64_t j, int64_t e) {
        return static_cast<double>(v[(st + j) * l.ld_kv + kv * l.HS + e]);
      };
      auto G = [&](int64_t i, int64_t e) {
        return static_cast<double>(dout[(st + i) * l.ld_q + h * l.HS + e]);
      };
      for (int64_t i = 0; i < len; ++i) {
        double mx = -1e300, z = 0.0;
        for (int64_t j = 0; j < len; ++j) {
          if (!visible(i, j, l.W)) continue;
          double sc = 0.0;
          for (int64_t e = 0; e < l.HS; ++e) sc += Q(i, e) * K(j, e);
          p[j] = sc * l.scale;
          mx = std::max(mx, p[j]);
        }
        for (int64_t j = 0; j < len; ++j)
          if (visible(i, j, l.W)) z += (p[j] = std::exp(p[j] - mx));
        double dsum = 0.0;
        for (int64_t j = 0; j < len; ++j) {
          if (!visible(i, j, l.W)) continue;
          p[j] /= z;
          double g = 0.0;
          for (int64_t e = 0; e < l.HS; ++e) g += G(i, e) * V(j, e);
          dp[j] = g;
          dsum += p[j] * g;
        }
        for (int64_t j = 0; j < len; ++j) {
          if (!visible(i, j, l.W)) continue;
          const double ds = p[j] * (dp[j] - dsum) * l.scale;
          for (int64_t e = 0; e < l.HS; ++e) {
            dq[(st + i) * l.ld_q + h * l.HS + e] += static_cast<float>(ds * K(j, e));
            dk[(st + j) * l.ld_kv + kv * l.HS + e] += static_cast<float>(ds * Q(i, e));
            dv[(st + j) * l.ld_kv + kv * l.HS + e] += static_cast<float>(p[j] * G(i, e));
          }
        }
      }
    }
  }
}

}  // namespace ct::kernels

// Attention core on [B, T, NH*HS] rows: four strided batched gemms over (B, NH) plus one fused row kernel per
// direction (mask + softmax + dropout forward; dropout + softmax backward). Scratch buffers persist per
// thread and only grow, so steady-state calls allocate nothing.
#include "kernels/attention.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "kernels/gemm.h"
#include "kernels/philox_lanes.h"
#include "kernels/vec_math.h"

namespace ct::kernels {
namespace {

struct Scratch {
  Tensor buf;
  void* get(int64_t nbytes) {
    if (buf.nbytes() < nbytes) buf = Tensor::zeros({(nbytes + 3) / 4}, DType::f32);
    return buf.data();
  }
};

thread_local Scratch t_pd, t_dpd, t_dctx;

struct Resolved {
  int64_t B, T, NH, HS, H, ldq, ldc, TT;
  int64_t Tn;          // dropout counter stride (AttentionDims::drop_T)
  int64_t window = 0;  // AttentionDims::window
};

Resolved resolve(const AttentionDims& d) {
  CT_CHECK(d.B > 0 && d.T > 0 && d.NH > 0 && d.HS > 0, "attention: bad dims B=", d.B, " T=", d.T,
           " NH=", d.NH, " HS=", d.HS);
  Resolved r{d.B,
             d.T,
             d.NH,
             d.HS,
             d.NH * d.HS,
             d.ld_qkv ? d.ld_qkv : d.NH * d.HS,
             d.ld_ctx ? d.ld_ctx : d.NH * d.HS,
             d.T * d.T,
             d.drop_T ? d.drop_T : d.T,
             d.window};
  CT_CHECK(d.window >= 0, "attention: window=", d.window, " must be >= 0 (0: global attention)");
  CT_CHECK(r.Tn >= r.T, "attention: drop_T=", r.Tn, " shorter than the sequence length ", r.T);
  CT_CHECK(r.ldq >= r.H && r.ldc >= r.H, "attention: row strides ld_qkv=", r.ldq, " ld_ctx=", r.ldc,
           " smaller than hidden ", r.H);
  return r;
}

// Gemm over (B, NH) heads. Operands named by role; layouts filled by the callers below.
Gemm heads_gemm(const Resolved& r, int64_t M, int64_t N, int64_t K, DType ab, DType c) {
  Gemm g;
  g.batch_outer = r.B;
  g.batch = r.NH;
  g.M = M;
  g.N = N;
  g.K = K;
  g.a_type = g.b_type = ab;
  g.c_type = c;
  return g;
}

// [B, T, ld] rows, head h at column h*HS: row stride ld, head stride HS, sequence stride T*ld.
void rows_a(Gemm& g, const Resolved& r, int64_t ld) {
  g.lda = ld;
  g.stride_a = r.HS;
  g.outer_stride_a = r.T * ld;
}
void rows_b(Gemm& g, const Resolved& r, int64_t ld) {
  g.ldb = ld;
  g.stride_b = r.HS;
  g.outer_stride_b = r.T * ld;
}
void rows_c(Gemm& g, const Resolved& r, int64_t ld) {
  g.ldc = ld;
  g.stride_c = r.HS;
  g.outer_stride_c = r.T * ld;
}
// [B, NH, T, T] dense score matrices.
void tt_a(Gemm& g, const Resolved& r) {
  g.lda = r.T;
  g.stride_a = r.TT;
  g.outer_stride_a = r.NH * r.TT;
}
void tt_c(Gemm& g, const Resolved& r) {
  g.ldc = r.T;
  g.stride_c = r.TT;
  g.outer_stride_c = r.NH * r.TT;
}

inline void store(float* p, int64_t i, float v) {
  p[i] = v;
}
inline void store(bf16* p, int64_t i, float v) {
  p[i] = to_bf16(v);
}

// The site whose counter for element j of score row `row` is the padded layout's ((b * NH + h) * Tn + i) *
// Tn + j, addressed as row * T + j like every row kernel here.
inline DropoutSite row_site(const DropoutSite& drop, int64_t row, const Resolved& r) {
  DropoutSite rs = resolve_row(drop, row * r.T);
  if (r.Tn != r.T) {
    const int64_t b = row / (r.NH * r.T), h = (row / r.T) % r.NH, i = row % r.T;
    const int64_t base = ((b * r.NH + h) * r.Tn + i) * r.Tn;
    rs.offset += static_cast<uint64_t>(base) - static_cast<uint64_t>(row * r.T);
  }
  return rs;
}

// Keys at or past lens[b] are masked for sequence b (padding at the end): they are skipped outright, their
// probabilities written as the exact zeros the additive mask would give.
// probs rows in place: mask, softmax; pd = dropout(probs) in the matmul type.
template <class TD>
void softmax_rows(float* probs, TD* pd, const float* mask, const int64_t* lens, const Resolved& r,
                  const DropoutSite& drop) {
  const int64_t rows = r.B * r.NH * r.T;
  const int64_t T = r.T;
#pragma omp parallel for schedule(static) if (rows * T > 16384)
  for (int64_t row = 0; row < rows; ++row) {
    float* x = probs + row * T;
    const int64_t b = row / (r.NH * T);
    const int64_t L = lens[b];
    if (mask) {
      const float* m = mask + b * T;
#pragma omp simd
      for (int64_t j = 0; j < L; ++j) x[j] += m[j] == 0.0f ? -FLT_MAX : 0.0f;
    }
    if (r.window > 0) {  // HF's sliding-window mask replaces the score outside the band by the lowest float
      const int64_t i = row % T;
      for (int64_t j = 0; j < std::min(L, i - r.window); ++j) x[j] = -FLT_MAX;
      for (int64_t j = std::max<int64_t>(0, i + r.window + 1); j < L; ++j) x[j] = -FLT_MAX;
    }
    float mx = -FLT_MAX;
#pragma omp simd reduction(max : mx)
    for (int64_t j = 0; j < L; ++j) mx = x[j] > mx ? x[j] : mx;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < L; ++j) {
      x[j] = fast_exp(x[j] - mx);
      s += x[j];
    }
    const float inv = 1.0f / s;
#pragma omp simd
    for (int64_t j = 0; j < L; ++j) x[j] *= inv;
    for (int64_t j = L; j < T; ++j) x[j] = 0.0f;
    if (!pd) continue;
    TD* y = pd + row * T;
    if (drop.p == 0.0f) {
#pragma omp simd
      for (int64_t j = 0; j < L; ++j) store(y, j, x[j]);
    } else {
      const DropoutSite rs = row_site(drop, row, r);
      for_each_dropout(rs.seed, rs.stream, rs.offset, rs.p, row * T, row * T + L,
                       [&](int64_t i, float keep) { store(y, i - row * T, x[i - row * T] * keep); });
    }
  }
}

// Recompute pd = dropout(probs) in the matmul type over each row's first lens[b] keys (backward).
template <class TD>
void dropped_probs(TD* pd, const float* probs, const int64_t* lens, const Resolved& r,
                   const DropoutSite& drop) {
  const int64_t rows = r.B * r.NH * r.T;
  const int64_t T = r.T;
#pragma omp parallel for schedule(static) if (rows * T > 16384)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t L = lens[row / (r.NH * T)];
    const float* x = probs + row * T;
    TD* y = pd + row * T;
    if (drop.p == 0.0f) {
#pragma omp simd
      for (int64_t j = 0; j < L; ++j) store(y, j, x[j]);
    } else {
      const DropoutSite rs = row_site(drop, row, r);
      for_each_dropout(rs.seed, rs.stream, rs.offset, rs.p, row * T, row * T + L,
                       [&](int64_t i, float keep) { store(y, i - row * T, x[i - row * T] * keep); });
    }
  }
}

inline float load(const float* p, int64_t i) {
  return p[i];
}
inline float load(const bf16* p, int64_t i) {
  return to_f32(p[i]);
}
// x as the operand type holds it (bf16: rounded).
template <class TD>
inline float load_as(float x) {
  if constexpr (std::is_same_v<TD, bf16>)
    return round_bf16(x);
  else
    return x;
}

// dS = P * (dP - sum(dP * P)) * alpha with dP = dPd * keep / (1 - p). The keep mask is read off pd (the
// dropped probabilities): pd == 0 means dropped or P == 0, and where P == 0, dS is 0 whatever the mask, so no
// Philox recomputation is needed. pd == null means no dropout. ds may alias pd (each element is read before
// it is written) or dpd.
template <class TD>
void softmax_backward_rows(TD* ds, const float* dpd, const float* probs, const TD* pd, const int64_t* lens,
                           const Resolved& r, float drop_p, float alpha) {
  const int64_t rows = r.B * r.NH * r.T;
  const int64_t T = r.T;
  const float scale = 1.0f / (1.0f - drop_p);
#pragma omp parallel for schedule(static) if (rows * T > 16384)
  for (int64_t row = 0; row < rows; ++row) {
    const float* g = dpd + row * T;
    const float* p = probs + row * T;
    const TD* y = pd ? pd + row * T : nullptr;
    const int64_t L = lens[row / (r.NH * T)];
    float s = 0.0f;
    if (y) {
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < L; ++j) s += (load(y, j) != 0.0f ? g[j] * scale : 0.0f) * p[j];
    } else {
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < L; ++j) s += g[j] * p[j];
    }
    TD* out = ds + row * T;
    if (y) {
#pragma omp simd
      for (int64_t j = 0; j < L; ++j) {
        const float dp = load(y, j) != 0.0f ? g[j] * scale : 0.0f;
        store(out, j, p[j] * (dp - s) * alpha);
      }
    } else {
#pragma omp simd
      for (int64_t j = 0; j < L; ++j) store(out, j, p[j] * (g[j] - s) * alpha);
    }
  }
}

}  // namespace

namespace {

// Key lengths per sequence, rounded up to kKeyQuantum (fewer distinct gemm shapes to cache), capped at T:
// everything past the last attended key is skipped. No mask, or a fully masked sequence (HF attends uniformly
// over all keys then), means T.
constexpr int64_t kKeyQuantum = 32;

const int64_t* key_lengths(const float* mask, const Resolved& r) {
  thread_local std::vector<int64_t> lens;
  lens.assign(static_cast<size_t>(r.B), r.T);
  if (!mask) return lens.data();
  for (int64_t b = 0; b < r.B; ++b) {
    int64_t last = -1;
    for (int64_t j = r.T - 1; j >= 0; --j)
      if (mask[b * r.T + j] != 0.0f) {
        last = j;
        break;
      }
    if (last < 0) continue;
    lens[b] = std::min(r.T, (last + 1 + kKeyQuantum - 1) / kKeyQuantum * kKeyQuantum);
  }
  return lens.data();
}

// Runs fn(b0, nb, L) over runs of consecutive sequences sharing one key length.
template <class Fn>
void for_each_group(const int64_t* lens, int64_t B, Fn&& fn) {
  int64_t b0 = 0;
  while (b0 < B) {
    int64_t b1 = b0 + 1;
    while (b1 < B && lens[b1] == lens[b0]) ++b1;
    fn(b0, b1 - b0, lens[b0]);
    b0 = b1;
  }
}

const void* at(const void* p, int64_t elems, DType t) {
  return static_cast<const char*>(p) + elems * dtype_size(t);
}
void* at(void* p, int64_t elems, DType t) {
  return static_cast<char*>(p) + elems * dtype_size(t);
}

void forward_impl(void* ctx, float* probs, const void* q, const void* k, const void* v, const float* mask,
                  const Resolved& r, DType dt, const DropoutSite& drop, void* saved_pd) {
  const float alpha = 1.0f / std::sqrt(static_cast<float>(r.HS));
  const int64_t* lens = key_lengths(mask, r);
  // scores = alpha * Q K^T (first L keys), straight into probs.
  for_each_group(lens, r.B, [&](int64_t b0, int64_t nb, int64_t L) {
    Gemm g = heads_gemm(r, r.T, L, r.HS, dt, DType::f32);
    g.batch_outer = nb;
    rows_a(g, r, r.ldq);
    rows_b(g, r, r.ldq);
    g.trans_b = true;
    tt_c(g, r);
    g.alpha = alpha;
    gemm(g, at(q, b0 * r.T * r.ldq, dt), at(k, b0 * r.T * r.ldq, dt), probs + b0 * r.NH * r.TT);
  });
  // Pd: a separate buffer unless f32 without dropout (then probs itself feeds the context product).
  const bool separate = dt == DType::bf16 || drop.p > 0.0f;
  void* pd = probs;
  if (separate) pd = saved_pd ? saved_pd : t_pd.get(r.B * r.NH * r.TT * dtype_size(dt));
  if (!separate)
    softmax_rows<float>(probs, nullptr, mask, lens, r, drop);
  else if (dt == DType::f32)
    softmax_rows(probs, static_cast<float*>(pd), mask, lens, r, drop);
  else
    softmax_rows(probs, static_cast<bf16*>(pd), mask, lens, r, drop);
  // ctx = Pd V over the first L keys.
  for_each_group(lens, r.B, [&](int64_t b0, int64_t nb, int64_t L) {
    Gemm g = heads_gemm(r, r.T, r.HS, L, dt, dt);
    g.batch_outer = nb;
    tt_a(g, r);
    rows_b(g, r, r.ldq);
    rows_c(g, r, r.ldc);
    gemm(g, at(pd, b0 * r.NH * r.TT, dt), at(v, b0 * r.T * r.ldq, dt), at(ctx, b0 * r.T * r.ldc, dt));
  });
}

void backward_impl(float* dq, float* dk, float* dv, const float* dctx, const void* q, const void* k,
                   const void* v, const float* probs, const float* mask, const Resolved& r, DType dt,
                   const DropoutSite& drop, void* saved_pd) {
  const float alpha = 1.0f / std::sqrt(static_cast<float>(r.HS));
  const int64_t n_tt = r.B * r.NH * r.TT;
  const int64_t* lens = key_lengths(mask, r);
  // dctx in the matmul type.
  const void* dctx_mm = dctx;
  int64_t ld_dctx = r.ldc;
  if (dt == DType::bf16) {
    bf16* tmp = static_cast<bf16*>(t_dctx.get(r.B * r.T * r.H * 2));
#pragma omp parallel for schedule(static) if (r.B * r.T * r.H > 16384)
    for (int64_t row = 0; row < r.B * r.T; ++row) f32_to_bf16(dctx + row * r.ldc, tmp + row * r.H, r.H);
    dctx_mm = tmp;
    ld_dctx = r.H;
  }
  // dPd = dctx V^T  [B, NH, T, L] f32 (row stride T)
  float* dpd = static_cast<float*>(t_dpd.get(n_tt * 4));
  for_each_group(lens, r.B, [&](int64_t b0, int64_t nb, int64_t L) {
    Gemm g = heads_gemm(r, r.T, L, r.HS, dt, DType::f32);
    g.batch_outer = nb;
    rows_a(g, r, ld_dctx);
    rows_b(g, r, r.ldq);
    g.trans_b = true;
    tt_c(g, r);
    gemm(g, at(dctx_mm, b0 * r.T * ld_dctx, dt), at(v, b0 * r.T * r.ldq, dt), dpd + b0 * r.NH * r.TT);
  });
  // dV[first L keys] += Pd^T dctx (later keys have Pd = 0 and get nothing).
  const bool separate = dt == DType::bf16 || drop.p > 0.0f;
  void* pd = const_cast<float*>(probs);
  if (separate && saved_pd) {
    pd = saved_pd;
  } else if (separate) {
    pd = t_pd.get(n_tt * dtype_size(dt));
    if (dt == DType::f32)
      dropped_probs(static_cast<float*>(pd), probs, lens, r, drop);
    else
      dropped_probs(static_cast<bf16*>(pd), probs, lens, r, drop);
  }
  for_each_group(lens, r.B, [&](int64_t b0, int64_t nb, int64_t L) {
    Gemm g = heads_gemm(r, L, r.HS, r.T, dt, DType::f32);
    g.batch_outer = nb;
    tt_a(g, r);
    g.trans_a = true;
    rows_b(g, r, ld_dctx);
    rows_c(g, r, r.ldq);
    g.accumulate = true;
    gemm(g, at(pd, b0 * r.NH * r.TT, dt), at(dctx_mm, b0 * r.T * ld_dctx, dt), dv + b0 * r.T * r.ldq);
  });
  // dS (alpha folded in): f32 in place over dPd, or bf16 into the Pd scratch (Pd is no longer needed).
  void* ds;
  if (dt == DType::f32) {
    softmax_backward_rows(dpd, dpd, probs, drop.p > 0.0f ? static_cast<const float*>(pd) : nullptr, lens, r,
                          drop.p, alpha);
    ds = dpd;
  } else {
    bf16* pdb = static_cast<bf16*>(pd);
    softmax_backward_rows(pdb, dpd, probs, drop.p > 0.0f ? pdb : nullptr, lens, r, drop.p, alpha);
    ds = pd;
  }
  // dQ += dS K ; dK[first L keys] += dS^T Q
  for_each_group(lens, r.B, [&](int64_t b0, int64_t nb, int64_t L) {
    Gemm g = heads_gemm(r, r.T, r.HS, L, dt, DType::f32);
    g.batch_outer = nb;
    tt_a(g, r);
    rows_b(g, r, r.ldq);
    rows_c(g, r, r.ldq);
    g.accumulate = true;
    gemm(g, at(ds, b0 * r.NH * r.TT, dt), at(k, b0 * r.T * r.ldq, dt), dq + b0 * r.T * r.ldq);
    Gemm h = heads_gemm(r, L, r.HS, r.T, dt, DType::f32);
    h.batch_outer = nb;
    tt_a(h, r);
    h.trans_a = true;
    rows_b(h, r, r.ldq);
    rows_c(h, r, r.ldq);
    h.accumulate = true;
    gemm(h, at(ds, b0 * r.NH * r.TT, dt), at(q, b0 * r.T * r.ldq, dt), dk + b0 * r.T * r.ldq);
  });
}

}  // namespace

void attention_forward(void* ctx, float* probs, const void* q, const void* k, const void* v,
                       const float* mask, const AttentionDims& d, DType dt, const DropoutSite& drop,
                       void* saved_pd) {
  const Resolved r = resolve(d);
  CT_CHECK(drop.p >= 0.0f && drop.p < 1.0f, "attention: dropout probability must be in [0, 1), got ", drop.p);
  forward_impl(ctx, probs, q, k, v, mask, r, dt, drop, saved_pd);
}

void attention_backward(float* dq, float* dk, float* dv, const float* dctx, const void* q, const void* k,
                        const void* v, const float* probs, const float* mask, const AttentionDims& d,
                        DType dt, const DropoutSite& drop, void* saved_pd) {
  const Resolved r = resolve(d);
  CT_CHECK(drop.p >= 0.0f && drop.p < 1.0f, "attention: dropout probability must be in [0, 1), got ", drop.p);
  backward_impl(dq, dk, dv, dctx, q, k, v, probs, mask, r, dt, drop, saved_pd);
}

void attention_backward(float* dq, float* dk, float* dv, const float* dctx, const void* q, const void* k,
                        const void* v, const float* probs, const AttentionDims& d, DType dt,
                        const DropoutSite& drop) {
  attention_backward(dq, dk, dv, dctx, q, k, v, probs, nullptr, d, dt, drop, nullptr);
}

namespace {

// Sequence b of a packed batch as a one-sequence padded problem of its own length.
struct VarlenSeq {
  Resolved r;
  int64_t row0;    // first row in q/k/v/ctx
  int64_t probs0;  // first element of its probs block
  DropoutSite drop;
};

template <class Fn>
void for_each_varlen_seq(const int64_t* cu, const AttentionDims& d, const DropoutSite& drop, Fn&& fn) {
  CT_CHECK(d.B > 0 && d.T > 0 && cu[0] == 0, "attention varlen: bad batch (B=", d.B, ", T=", d.T,
           ", cu_seqlens[0]=", cu[0], ")");
  int64_t probs0 = 0;
  for (int64_t b = 0; b < d.B; ++b) {
    const int64_t L = cu[b + 1] - cu[b];
    CT_CHECK(L > 0 && L <= d.T, "attention varlen: sequence ", b, " has length ", L, ", expected 1..", d.T);
    AttentionDims one = d;
    one.B = 1;
    one.T = L;
    one.drop_T = d.T;
    VarlenSeq s{resolve(one), cu[b], probs0, drop};
    if (drop.row_streams) {  // one stream per sequence, counters restarting at its offset
      s.drop.stream = drop.row_streams[b];
      s.drop.row_streams = nullptr;
      s.drop.row_elems = 0;
    } else {
      s.drop.offset += static_cast<uint64_t>(b * d.NH * d.T * d.T);
    }
    fn(s);
    probs0 += d.NH * L * L;
  }
}

}  // namespace

int64_t varlen_probs_elems(const int64_t* cu_seqlens, int64_t B, int64_t NH) {
  int64_t n = 0;
  for (int64_t b = 0; b < B; ++b)
    n += NH * (cu_seqlens[b + 1] - cu_seqlens[b]) * (cu_seqlens[b + 1] - cu_seqlens[b]);
  return n;
}

void attention_forward_varlen(void* ctx, float* probs, const void* q, const void* k, const void* v,
                              const int64_t* cu_seqlens, const AttentionDims& d, DType dt,
                              const DropoutSite& drop, void* saved_pd) {
  CT_CHECK(drop.p >= 0.0f && drop.p < 1.0f, "attention: dropout probability must be in [0, 1), got ", drop.p);
  for_each_varlen_seq(cu_seqlens, d, drop, [&](const VarlenSeq& s) {
    forward_impl(at(ctx, s.row0 * s.r.ldc, dt), probs + s.probs0, at(q, s.row0 * s.r.ldq, dt),
                 at(k, s.row0 * s.r.ldq, dt), at(v, s.row0 * s.r.ldq, dt), nullptr, s.r, dt, s.drop,
                 saved_pd ? at(saved_pd, s.probs0, dt) : nullptr);
  });
}

void attention_backward_varlen(float* dq, float* dk, float* dv, const float* dctx, const void* q,
                               const void* k, const void* v, const float* probs, const int64_t* cu_seqlens,
                               const AttentionDims& d, DType dt, const DropoutSite& drop, void* saved_pd) {
  CT_CHECK(drop.p >= 0.0f && drop.p < 1.0f, "attention: dropout probability must be in [0, 1), got ", drop.p);
  for_each_varlen_seq(cu_seqlens, d, drop, [&](const VarlenSeq& s) {
    backward_impl(dq + s.row0 * s.r.ldq, dk + s.row0 * s.r.ldq, dv + s.row0 * s.r.ldq,
                  dctx + s.row0 * s.r.ldc, at(q, s.row0 * s.r.ldq, dt), at(k, s.row0 * s.r.ldq, dt),
                  at(v, s.row0 * s.r.ldq, dt), probs + s.probs0, nullptr, s.r, dt, s.drop,
                  saved_pd ? at(saved_pd, s.probs0, dt) : nullptr);
  });
}

namespace {

constexpr int64_t kMaxRowsHead = 256;  // a head's accumulators live on the stack

// One selected query row of the query-rows forms, for one head: where its sequence's key rows start and how
// many it attends to, and the dropout site and element index of its probability row, exactly as the full
// forms' row for the same query.
struct QueryRow {
  int64_t q_row = 0, k_row = 0, keys = 0;
  DropoutSite rs;
  int64_t e0 = 0;  // dropout element index of key 0 (for_each_dropout's begin)
};

// Calls fn(n, h, QueryRow) for every selected row n (rows[n], ascending token rows) and head h; in parallel
// over (sequence, head), each pair's rows in order, so that a pair alone writes its sequence's key rows in
// its head's columns (backward's dK / dV).
template <class Fn>
void for_each_query_row(const int64_t* rows, int64_t n_rows, const float* mask, const int64_t* cu,
                        const AttentionDims& d, const DropoutSite& drop, Fn&& fn) {
  struct Seq {
    int64_t first = 0, count = 0;  // its selected rows: rows[first, first + count)
    int64_t row0 = 0, keys = 0;    // its key rows
    Resolved r;                    // its dropout geometry (the full forms')
    DropoutSite drop;
  };
  std::vector<Seq> seqs;
  if (cu) {
    for_each_varlen_seq(cu, d, drop, [&](const VarlenSeq& s) {
      seqs.push_back(Seq{0, 0, s.row0, s.r.T, s.r, s.drop});
    });
  } else {
    const Resolved r = resolve(d);
    const int64_t* lens = key_lengths(mask, r);
    for (int64_t b = 0; b < r.B; ++b) seqs.push_back(Seq{0, 0, b * r.T, lens[b], r, drop});
  }
  const int64_t B = static_cast<int64_t>(seqs.size());
  for (int64_t n = 0, b = 0; n < n_rows; ++n) {
    CT_CHECK(n == 0 || rows[n] > rows[n - 1], "attention (query rows): rows must ascend, row ", n, " is ",
             rows[n], " after ", rows[n - 1]);
    while (b < B && rows[n] >= seqs[b].row0 + (cu ? seqs[b].keys : d.T)) ++b;
    CT_CHECK(b < B && rows[n] >= seqs[b].row0, "attention (query rows): row ", rows[n], " outside the batch");
    if (seqs[b].count == 0) seqs[b].first = n;
    ++seqs[b].count;
  }
#pragma omp parallel for schedule(dynamic, 1) if (B * d.NH > 1)
  for (int64_t t = 0; t < B * d.NH; ++t) {
    const Seq& s = seqs[t / d.NH];
    const int64_t h = t % d.NH;
    for (int64_t n = s.first; n < s.first + s.count; ++n) {
      const int64_t i = rows[n] - s.row0;  // query position in its sequence
      // The full forms' probability row of (sequence, head, query): padded (b * NH + h) * T + i over the
      // whole batch; packed h * L + i within the sequence's own block (s.r is its one-sequence view).
      const int64_t row = cu ? h * s.r.T + i : ((t / d.NH) * d.NH + h) * s.r.T + i;
      fn(n, h, QueryRow{rows[n], s.row0, s.keys, row_site(s.drop, row, s.r), row * s.r.T});
    }
  }
}

template <class T>
const T* typed(const void* p) {
  return static_cast<const T*>(p);
}

template <class TD>
void rows_forward(void* ctx_rows, float* probs_rows, const void* q, const void* k, const void* v,
                  const float* mask, const int64_t* cu, const int64_t* rows, int64_t n_rows,
                  const AttentionDims& d, const DropoutSite& drop) {
  const int64_t T = d.T, HS = d.HS, ldq = d.ld_qkv ? d.ld_qkv : d.NH * d.HS;
  const int64_t ldc = d.ld_ctx ? d.ld_ctx : d.NH * d.HS;
  const float alpha = 1.0f / std::sqrt(static_cast<float>(HS));
  const TD* Q = typed<TD>(q);
  const TD* K = typed<TD>(k);
  const TD* V = typed<TD>(v);
  TD* C = static_cast<TD*>(ctx_rows);
  for_each_query_row(rows, n_rows, mask, cu, d, drop, [&](int64_t n, int64_t h, const QueryRow& f) {
    float* p = probs_rows + (n * d.NH + h) * T;
    const TD* qr = Q + f.q_row * ldq + h * HS;
    const int64_t b_row = f.k_row;  // padded: the sequence's first row, whose mask row is b_row / T
    for (int64_t j = 0; j < f.keys; ++j) {
      const TD* kr = K + (f.k_row + j) * ldq + h * HS;
      float acc = 0.0f;
      for (int64_t c = 0; c < HS; ++c) acc += load(qr, c) * load(kr, c);
      p[j] = alpha * acc;
      if (!cu && mask) p[j] += mask[b_row + j] == 0.0f ? -FLT_MAX : 0.0f;
    }
    float mx = -FLT_MAX;
    for (int64_t j = 0; j < f.keys; ++j) mx = p[j] > mx ? p[j] : mx;
    float sum = 0.0f;
    for (int64_t j = 0; j < f.keys; ++j) {
      p[j] = fast_exp(p[j] - mx);
      sum += p[j];
    }
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < f.keys; ++j) p[j] *= inv;
    for (int64_t j = f.keys; j < T; ++j) p[j] = 0.0f;
    // The context product multiplies the dropped probabilities in the operand type, as the full forms do.
    thread_local std::vector<float> pd_buf;
    pd_buf.assign(p, p + f.keys);
    float* pd = pd_buf.data();
    if (f.rs.p > 0.0f)
      for_each_dropout(f.rs.seed, f.rs.stream, f.rs.offset, f.rs.p, f.e0, f.e0 + f.keys,
                       [&](int64_t i, float keep) { pd[i - f.e0] *= keep; });
    float acc[kMaxRowsHead] = {};
    for (int64_t j = 0; j < f.keys; ++j) {
      const float w = load_as<TD>(pd[j]);
      const TD* vr = V + (f.k_row + j) * ldq + h * HS;
      for (int64_t c = 0; c < HS; ++c) acc[c] += w * load(vr, c);
    }
    for (int64_t c = 0; c < HS; ++c) store(C + n * ldc + h * HS, c, acc[c]);
  });
}

template <class TD>
void rows_backward(float* dq, float* dk, float* dv, const float* dctx_rows, const void* q, const void* k,
                   const void* v, const float* probs_rows, const float* mask, const int64_t* cu,
                   const int64_t* rows, int64_t n_rows, const AttentionDims& d, const DropoutSite& drop) {
  const int64_t T = d.T, HS = d.HS, ldq = d.ld_qkv ? d.ld_qkv : d.NH * d.HS;
  const int64_t ldc = d.ld_ctx ? d.ld_ctx : d.NH * d.HS;
  const float alpha = 1.0f / std::sqrt(static_cast<float>(HS));
  const float scale = drop.p > 0.0f ? 1.0f / (1.0f - drop.p) : 1.0f;
  const TD* Q = typed<TD>(q);
  const TD* K = typed<TD>(k);
  const TD* V = typed<TD>(v);
  for_each_query_row(rows, n_rows, mask, cu, d, drop, [&](int64_t n, int64_t h, const QueryRow& f) {
    const float* p = probs_rows + (n * d.NH + h) * T;
    float g[kMaxRowsHead];  // dctx in the operand type, as the full forms multiply it
    for (int64_t c = 0; c < HS; ++c) g[c] = load_as<TD>(dctx_rows[n * ldc + h * HS + c]);
    thread_local std::vector<float> keep_buf, dp_buf;
    keep_buf.assign(static_cast<size_t>(f.keys), 1.0f);
    dp_buf.resize(static_cast<size_t>(f.keys));
    float* keep = keep_buf.data();
    float* dp = dp_buf.data();
    if (f.rs.p > 0.0f)
      for_each_dropout(f.rs.seed, f.rs.stream, f.rs.offset, f.rs.p, f.e0, f.e0 + f.keys,
                       [&](int64_t i, float kp) { keep[i - f.e0] = kp; });
    float s = 0.0f;
    for (int64_t j = 0; j < f.keys; ++j) {
      const TD* vr = V + (f.k_row + j) * ldq + h * HS;
      const float pd = load_as<TD>(p[j] * keep[j]);
      float acc = 0.0f;
      for (int64_t c = 0; c < HS; ++c) {
        acc += g[c] * load(vr, c);
        dv[(f.k_row + j) * ldq + h * HS + c] += pd * g[c];
      }
      // The full forms read the keep mask off the dropped probability (zero: dropped, or P itself zero).
      dp[j] = drop.p > 0.0f ? (pd != 0.0f ? acc * scale : 0.0f) : acc;
      s += dp[j] * p[j];
    }
    const TD* qr = Q + f.q_row * ldq + h * HS;
    float dqr[kMaxRowsHead] = {};
    for (int64_t j = 0; j < f.keys; ++j) {
      const float ds = load_as<TD>(p[j] * (dp[j] - s) * alpha);
      const TD* kr = K + (f.k_row + j) * ldq + h * HS;
      for (int64_t c = 0; c < HS; ++c) {
        dqr[c] += ds * load(kr, c);
        dk[(f.k_row + j) * ldq + h * HS + c] += ds * load(qr, c);
      }
    }
    for (int64_t c = 0; c < HS; ++c) dq[f.q_row * ldq + h * HS + c] += dqr[c];
  });
}

void check_rows(const AttentionDims& d, const DropoutSite& drop, int64_t n_rows) {
  CT_CHECK(d.B > 0 && d.T > 0 && d.NH > 0 && d.HS > 0 && n_rows >= 0,
           "attention (query rows): bad dims B=", d.B, " T=", d.T, " NH=", d.NH, " HS=", d.HS,
           " rows=", n_rows);
  CT_CHECK(d.HS <= kMaxRowsHead, "attention (query rows): head size ", d.HS, " above the supported ",
           kMaxRowsHead);
  CT_CHECK(d.window == 0, "attention (query rows): sliding windows are not supported");
  CT_CHECK(drop.p >= 0.0f && drop.p < 1.0f, "attention: dropout probability must be in [0, 1), got ", drop.p);
}

}  // namespace

void attention_rows_forward(void* ctx_rows, float* probs_rows, const void* q, const void* k, const void* v,
                            const float* mask, const int64_t* cu_seqlens, const int64_t* rows, int64_t n_rows,
                            const AttentionDims& d, DType dt, const DropoutSite& drop) {
  check_rows(d, drop, n_rows);
  if (dt == DType::bf16)
    rows_forward<bf16>(ctx_rows, probs_rows, q, k, v, mask, cu_seqlens, rows, n_rows, d, drop);
  else
    rows_forward<float>(ctx_rows, probs_rows, q, k, v, mask, cu_seqlens, rows, n_rows, d, drop);
}

void attention_rows_backward(float* dq, float* dk, float* dv, const float* dctx_rows, const void* q,
                             const void* k, const void* v, const float* probs_rows, const float* mask,
                             const int64_t* cu_seqlens, const int64_t* rows, int64_t n_rows,
                             const AttentionDims& d, DType dt, const DropoutSite& drop) {
  check_rows(d, drop, n_rows);
  if (dt == DType::bf16)
    rows_backward<bf16>(dq, dk, dv, dctx_rows, q, k, v, probs_rows, mask, cu_seqlens, rows, n_rows, d, drop);
  else
    rows_backward<float>(dq, dk, dv, dctx_rows, q, k, v, probs_rows, mask, cu_seqlens, rows, n_rows, d, drop);
}

void attention_forward_reference(float* ctx, float* probs, const float* q, const float* k, const float* v,
                                 const float* mask, const AttentionDims& d, const DropoutSite& drop) {
  const int64_t B = d.B, T = d.T, NH = d.NH, HS = d.HS, H = NH * HS;
  std::vector<uint8_t> keep(static_cast<size_t>(B * NH * T * T));
  dropout_mask_reference(keep.data(), B * NH * T * T, drop);
  const double scale = drop.p > 0.0f ? 1.0 / (1.0 - drop.p) : 1.0;
  std::vector<double> s(static_cast<size_t>(T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < NH; ++h)
      for (int64_t i = 0; i < T; ++i) {
        const int64_t row = (b * NH + h) * T + i;
        double mx = -1e300;
        for (int64_t j = 0; j < T; ++j) {
          double acc = 0.0;
          for (int64_t c = 0; c < HS; ++c)
            acc += static_cast<double>(q[(b * T + i) * H + h * HS + c]) * k[(b * T + j) * H + h * HS + c];
          acc /= std::sqrt(static_cast<double>(HS));
          if (mask && mask[b * T + j] == 0.0f) acc += -static_cast<double>(FLT_MAX);
          if (d.window > 0 && std::abs(i - j) > d.window) acc = -static_cast<double>(FLT_MAX);
          s[j] = acc;
          mx = std::max(mx, acc);
        }
        double sum = 0.0;
        for (int64_t j = 0; j < T; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int64_t j = 0; j < T; ++j) probs[row * T + j] = static_cast<float>(s[j] / sum);
        for (int64_t c = 0; c < HS; ++c) {
          double acc = 0.0;
          for (int64_t j = 0; j < T; ++j)
            acc += s[j] / sum * (keep[row * T + j] ? scale : 0.0) * v[(b * T + j) * H + h * HS + c];
          ctx[(b * T + i) * H + h * HS + c] = static_cast<float>(acc);
        }
      }
}

void attention_backward_reference(float* dq, float* dk, float* dv, const float* dctx, const float* q,
                                  const float* k, const float* v, const float* probs, const AttentionDims& d,
                                  const DropoutSite& drop) {
  const int64_t B = d.B, T = d.T, NH = d.NH, HS = d.HS, H = NH * HS;
  std::vector<uint8_t> keep(static_cast<size_t>(B * NH * T * T));
  dropout_mask_reference(keep.data(), B * NH * T * T, drop);
  const double scale = drop.p > 0.0f ? 1.0 / (1.0 - drop.p) : 1.0;
  const double alpha = 1.0 / std::sqrt(static_cast<double>(HS));
  std::vector<double> dp(static_cast<size_t>(T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < NH; ++h)
      for (int64_t i = 0; i < T; ++i) {
        const int64_t row = (b * NH + h) * T + i;
        const float* p = probs + row * T;
        double s = 0.0;
        for (int64_t j = 0; j < T; ++j) {
          const double m = keep[row * T + j] ? scale : 0.0;
          double g = 0.0;
          for (int64_t c = 0; c < HS; ++c)
            g += static_cast<double>(dctx[(b * T + i) * H + h * HS + c]) * v[(b * T + j) * H + h * HS + c];
          dp[j] = g * m;
          s += dp[j] * p[j];
          for (int64_t c = 0; c < HS; ++c)
            dv[(b * T + j) * H + h * HS + c] +=
                static_cast<float>(p[j] * m * dctx[(b * T + i) * H + h * HS + c]);
        }
        for (int64_t j = 0; j < T; ++j) {
          const double ds = p[j] * (dp[j] - s) * alpha;
          for (int64_t c = 0; c < HS; ++c) {
            dq[(b * T + i) * H + h * HS + c] += static_cast<float>(ds * k[(b * T + j) * H + h * HS + c]);
            dk[(b * T + j) * H + h * HS + c] += static_cast<float>(ds * q[(b * T + i) * H + h * HS + c]);
          }
        }
      }
}

}  // namespace ct::kernels

// Attention core on [B, T, NH*HS] rows: one task per (sequence, group of heads), in parallel, each running
// its heads' products on one thread with the row kernels between them (mask + softmax + dropout forward;
// dropout + softmax backward), so a head's [T, T] scores stay in cache. Scratch buffers persist per thread
// and only grow, so steady-state calls allocate nothing.
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

// Keys at or past L are masked for the row's sequence (padding at the end): they are skipped outright, their
// probabilities written as the exact zeros the additive mask would give.
// One score row x in place (T floats, `row` its index over [B, NH, T]): mask, softmax over the first L; y =
// dropout(x) in the matmul type when y is given.
template <class TD>
inline void softmax_row(float* x, TD* y, const float* mask_b, int64_t row, int64_t L, const Resolved& r,
                        const DropoutSite& drop) {
  const int64_t T = r.T;
  if (mask_b) {
#pragma omp simd
    for (int64_t j = 0; j < L; ++j) x[j] += mask_b[j] == 0.0f ? -FLT_MAX : 0.0f;
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
  if (!y) return;
  if (drop.p == 0.0f) {
#pragma omp simd
    for (int64_t j = 0; j < L; ++j) store(y, j, x[j]);
  } else {
    const DropoutSite rs = row_site(drop, row, r);
    for_each_dropout(rs.seed, rs.stream, rs.offset, rs.p, row * T, row * T + L,
                     [&](int64_t i, float keep) { store(y, i - row * T, x[i - row * T] * keep); });
  }
}

// y = dropout(x) in the matmul type over the row's first L keys (backward's recompute).
template <class TD>
inline void dropped_row(TD* y, const float* x, int64_t row, int64_t L, const Resolved& r,
                        const DropoutSite& drop) {
  const int64_t T = r.T;
  if (drop.p == 0.0f) {
#pragma omp simd
    for (int64_t j = 0; j < L; ++j) store(y, j, x[j]);
  } else {
    const DropoutSite rs = row_site(drop, row, r);
    for_each_dropout(rs.seed, rs.stream, rs.offset, rs.p, row * T, row * T + L,
                     [&](int64_t i, float keep) { store(y, i - row * T, x[i - row * T] * keep); });
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

// One row of dS = P * (dP - sum(dP * P)) * alpha with dP = dPd * keep / (1 - p). The keep mask is read off
// y (the dropped probabilities): y == 0 means dropped or P == 0, and where P == 0, dS is 0 whatever the
// mask, so no Philox recomputation is needed. y == null means no dropout. out may alias y or g (each element
// is read before it is written).
template <class TD>
inline void softmax_backward_row(TD* out, const float* g, const float* p, const TD* y, int64_t L, float scale,
                                 float alpha) {
  float s = 0.0f;
  if (y) {
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < L; ++j) s += (load(y, j) != 0.0f ? g[j] * scale : 0.0f) * p[j];
#pragma omp simd
    for (int64_t j = 0; j < L; ++j) {
      const float dp = load(y, j) != 0.0f ? g[j] * scale : 0.0f;
      store(out, j, p[j] * (dp - s) * alpha);
    }
  } else {
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < L; ++j) s += g[j] * p[j];
#pragma omp simd
    for (int64_t j = 0; j < L; ++j) store(out, j, p[j] * (g[j] - s) * alpha);
  }
}

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

const void* at(const void* p, int64_t elems, DType t) {
  return static_cast<const char*>(p) + elems * dtype_size(t);
}
void* at(void* p, int64_t elems, DType t) {
  return static_cast<char*>(p) + elems * dtype_size(t);
}

// One attention problem: a padded batch, or one sequence of a packed batch seen as a batch of one (r.T its
// length). Pointers are offset to the problem's first row and its first probability block.
struct Problem {
  Resolved r;
  const int64_t* lens = nullptr;  // [r.B] keys attended per sequence; null: every sequence attends len_one
  int64_t len_one = 0;
  int64_t row0 = 0;             // packed: the sequence's first row in the batch
  const float* mask = nullptr;  // [r.B, T] or null
  DropoutSite drop;
  const void *q = nullptr, *k = nullptr, *v = nullptr;
  void* ctx = nullptr;
  float* probs = nullptr;
  void* saved_pd = nullptr;
  // Backward: gradients (f32, row stride r.ldq), dctx and its copy in the matmul type (row stride ld_dctx).
  float *dq = nullptr, *dk = nullptr, *dv = nullptr;
  const void* dctx_mm = nullptr;
  int64_t ld_dctx = 0;
  int64_t keys(int64_t b) const { return lens ? lens[b] : len_one; }
};

// The products of `heads` consecutive heads of one sequence: batched over the heads (head stride HS in the
// row layout, TT between score matrices), on one thread, the exact shape (key lengths are few per run).
Gemm heads_gemm(int64_t heads, int64_t M, int64_t N, int64_t K, DType ab, DType c) {
  Gemm g;
  g.batch = heads;
  g.M = M;
  g.N = N;
  g.K = K;
  g.a_type = g.b_type = ab;
  g.c_type = c;
  g.quantize_shape = false;
  return g;
}

// A task's heads: as many of one sequence's heads as keep their [T, T] f32 scores within kTaskScores floats
// (one at BERT's 384 or 512 tokens, 4 at 128, all 12 below ~70), so that short sequences do not pay a
// product call per head and long ones keep a task's scores in its core's cache.
constexpr int64_t kTaskScores = 1 << 16;

int64_t heads_per_task(const Resolved& r) {
  return std::clamp<int64_t>(kTaskScores / std::max<int64_t>(r.TT, 1), 1, r.NH);
}

// Runs fn(problem, b, h0, heads) over every problem's sequences b and groups of heads [h0, h0 + heads), in
// parallel: a task's scores, probabilities and products stay in its core's cache from the first product to
// the last, where per-phase passes over the whole batch (28 MB of scores at BERT-base QA shapes) went
// through memory between phases. A task writes its own heads' columns of its own sequence's rows only, so
// backward's dQ / dK / dV need no reduction, and every product runs whole on one thread, so the result does
// not depend on which thread runs which task. (It can depend on the thread count a primitive was created
// under: oneDNN's AVX2 matmul splits work by that count.)
struct HeadTask {
  int32_t problem;
  int32_t heads;
  int64_t b, h0;
};

template <class Fn>
void for_each_head_group(const std::vector<Problem>& problems, Fn&& fn) {
  thread_local std::vector<HeadTask> tasks;
  tasks.clear();
  for (size_t p = 0; p < problems.size(); ++p) {
    const Resolved& r = problems[p].r;
    const int64_t hg = heads_per_task(r);
    for (int64_t b = 0; b < r.B; ++b)
      for (int64_t h0 = 0; h0 < r.NH; h0 += hg)
        tasks.push_back({static_cast<int32_t>(p), static_cast<int32_t>(std::min(hg, r.NH - h0)), b, h0});
  }
  const HeadTask* tp = tasks.data();
  const int64_t n = static_cast<int64_t>(tasks.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < n; ++i)
    fn(problems[static_cast<size_t>(tp[i].problem)], tp[i].b, tp[i].h0, static_cast<int64_t>(tp[i].heads));
}

template <class TD>
void forward_heads(const Problem& P, int64_t b, int64_t h0, int64_t nh, DType dt, float alpha) {
  const Resolved& r = P.r;
  const int64_t T = r.T, L = P.keys(b), bh0 = b * r.NH + h0;
  const int64_t off = b * T * r.ldq + h0 * r.HS;
  // scores = alpha * Q K^T over the first L keys, straight into probs.
  float* S = P.probs + bh0 * r.TT;
  Gemm g = heads_gemm(nh, T, L, r.HS, dt, DType::f32);
  g.lda = g.ldb = r.ldq;
  g.stride_a = g.stride_b = r.HS;
  g.trans_b = true;
  g.ldc = T;
  g.stride_c = r.TT;
  g.alpha = alpha;
  gemm(g, at(P.q, off, dt), at(P.k, off, dt), S);
  // Pd: a separate buffer unless f32 without dropout (then probs itself feeds the context product).
  const bool separate = dt == DType::bf16 || P.drop.p > 0.0f;
  TD* pd = nullptr;
  if (separate)
    pd = P.saved_pd ? static_cast<TD*>(P.saved_pd) + bh0 * r.TT
                    : static_cast<TD*>(t_pd.get(nh * r.TT * static_cast<int64_t>(sizeof(TD))));
  const float* mask_b = P.mask ? P.mask + b * T : nullptr;
  for (int64_t i = 0; i < nh * T; ++i)
    softmax_row(S + i * T, pd ? pd + i * T : nullptr, mask_b, bh0 * T + i, L, r, P.drop);
  // ctx = Pd V over the first L keys.
  Gemm c = heads_gemm(nh, T, r.HS, L, dt, dt);
  c.lda = T;
  c.stride_a = r.TT;
  c.ldb = r.ldq;
  c.stride_b = r.HS;
  c.ldc = r.ldc;
  c.stride_c = r.HS;
  gemm(c, pd ? static_cast<const void*>(pd) : S, at(P.v, off, dt), at(P.ctx, b * T * r.ldc + h0 * r.HS, dt));
}

template <class TD>
void backward_heads(const Problem& P, int64_t b, int64_t h0, int64_t nh, DType dt, float alpha) {
  const Resolved& r = P.r;
  const int64_t T = r.T, L = P.keys(b), bh0 = b * r.NH + h0;
  const int64_t off = b * T * r.ldq + h0 * r.HS;
  const void* dctx_h = at(P.dctx_mm, b * T * P.ld_dctx + h0 * r.HS, dt);
  const float* probs = P.probs + bh0 * r.TT;
  // dPd = dctx V^T  [nh, T, L] f32 (row stride T)
  float* dpd = static_cast<float*>(t_dpd.get(nh * r.TT * 4));
  Gemm g = heads_gemm(nh, T, L, r.HS, dt, DType::f32);
  g.lda = P.ld_dctx;
  g.ldb = r.ldq;
  g.stride_a = g.stride_b = r.HS;
  g.trans_b = true;
  g.ldc = T;
  g.stride_c = r.TT;
  gemm(g, dctx_h, at(P.v, off, dt), dpd);
  // dV[first L keys] += Pd^T dctx (later keys have Pd = 0 and get nothing).
  const bool separate = dt == DType::bf16 || P.drop.p > 0.0f;
  TD* pd = nullptr;  // f32 without dropout: probs themselves
  if constexpr (std::is_same_v<TD, float>) pd = const_cast<float*>(probs);
  if (separate && P.saved_pd) {
    pd = static_cast<TD*>(P.saved_pd) + bh0 * r.TT;
  } else if (separate) {
    pd = static_cast<TD*>(t_pd.get(nh * r.TT * static_cast<int64_t>(sizeof(TD))));
    for (int64_t i = 0; i < nh * T; ++i) dropped_row(pd + i * T, probs + i * T, bh0 * T + i, L, r, P.drop);
  }
  Gemm v = heads_gemm(nh, L, r.HS, T, dt, DType::f32);
  v.trans_a = true;
  v.lda = T;
  v.stride_a = r.TT;
  v.ldb = P.ld_dctx;
  v.ldc = r.ldq;
  v.stride_b = v.stride_c = r.HS;
  v.accumulate = true;
  gemm(v, pd, dctx_h, P.dv + off);
  // dS (alpha folded in): f32 in place over dPd, or in the matmul type over Pd (no longer needed).
  const float scale = 1.0f / (1.0f - P.drop.p);
  const TD* keep = P.drop.p > 0.0f ? pd : nullptr;
  TD* ds;
  if constexpr (std::is_same_v<TD, float>)
    ds = dpd;
  else
    ds = pd;
  for (int64_t i = 0; i < nh * T; ++i)
    softmax_backward_row(ds + i * T, dpd + i * T, probs + i * T, keep ? keep + i * T : nullptr, L, scale,
                         alpha);
  // dQ += dS K ; dK[first L keys] += dS^T Q
  Gemm dq = heads_gemm(nh, T, r.HS, L, dt, DType::f32);
  dq.lda = T;
  dq.stride_a = r.TT;
  dq.ldb = dq.ldc = r.ldq;
  dq.stride_b = dq.stride_c = r.HS;
  dq.accumulate = true;
  gemm(dq, ds, at(P.k, off, dt), P.dq + off);
  Gemm dk = heads_gemm(nh, L, r.HS, T, dt, DType::f32);
  dk.trans_a = true;
  dk.lda = T;
  dk.stride_a = r.TT;
  dk.ldb = dk.ldc = r.ldq;
  dk.stride_b = dk.stride_c = r.HS;
  dk.accumulate = true;
  gemm(dk, ds, at(P.q, off, dt), P.dk + off);
}

void run_forward(const std::vector<Problem>& problems, DType dt, int64_t HS) {
  const float alpha = 1.0f / std::sqrt(static_cast<float>(HS));
  for_each_head_group(problems, [&](const Problem& P, int64_t b, int64_t h0, int64_t nh) {
    if (dt == DType::f32)
      forward_heads<float>(P, b, h0, nh, dt, alpha);
    else
      forward_heads<bf16>(P, b, h0, nh, dt, alpha);
  });
}

// dctx in the matmul type: bf16 rows (row stride H) in a per-call scratch, or dctx itself.
const void* dctx_in_matmul_type(const float* dctx, int64_t rows, int64_t H, int64_t ldc, DType dt,
                                int64_t& ld_out) {
  ld_out = ldc;
  if (dt == DType::f32) return dctx;
  bf16* tmp = static_cast<bf16*>(t_dctx.get(rows * H * 2));
#pragma omp parallel for schedule(static) if (rows * H > 16384)
  for (int64_t row = 0; row < rows; ++row) f32_to_bf16(dctx + row * ldc, tmp + row * H, H);
  ld_out = H;
  return tmp;
}

void run_backward(const std::vector<Problem>& problems, DType dt, int64_t HS) {
  const float alpha = 1.0f / std::sqrt(static_cast<float>(HS));
  for_each_head_group(problems, [&](const Problem& P, int64_t b, int64_t h0, int64_t nh) {
    if (dt == DType::f32)
      backward_heads<float>(P, b, h0, nh, dt, alpha);
    else
      backward_heads<bf16>(P, b, h0, nh, dt, alpha);
  });
}

Problem padded_problem(const AttentionDims& d, const float* mask, const DropoutSite& drop) {
  Problem P;
  P.r = resolve(d);
  P.lens = key_lengths(mask, P.r);
  P.mask = mask;
  P.drop = drop;
  return P;
}

}  // namespace

void attention_forward(void* ctx, float* probs, const void* q, const void* k, const void* v,
                       const float* mask, const AttentionDims& d, DType dt, const DropoutSite& drop,
                       void* saved_pd) {
  CT_CHECK(drop.p >= 0.0f && drop.p < 1.0f, "attention: dropout probability must be in [0, 1), got ", drop.p);
  Problem P = padded_problem(d, mask, drop);
  P.q = q;
  P.k = k;
  P.v = v;
  P.ctx = ctx;
  P.probs = probs;
  P.saved_pd = saved_pd;
  run_forward({P}, dt, P.r.HS);
}

void attention_backward(float* dq, float* dk, float* dv, const float* dctx, const void* q, const void* k,
                        const void* v, const float* probs, const float* mask, const AttentionDims& d,
                        DType dt, const DropoutSite& drop, void* saved_pd) {
  CT_CHECK(drop.p >= 0.0f && drop.p < 1.0f, "attention: dropout probability must be in [0, 1), got ", drop.p);
  Problem P = padded_problem(d, mask, drop);
  P.q = q;
  P.k = k;
  P.v = v;
  P.probs = const_cast<float*>(probs);
  P.saved_pd = saved_pd;
  P.dq = dq;
  P.dk = dk;
  P.dv = dv;
  P.dctx_mm = dctx_in_matmul_type(dctx, P.r.B * P.r.T, P.r.H, P.r.ldc, dt, P.ld_dctx);
  run_backward({P}, dt, P.r.HS);
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

// One problem per sequence of a packed batch, every key of it attended.
std::vector<Problem> varlen_problems(const int64_t* cu, const AttentionDims& d, DType dt,
                                     const DropoutSite& drop, const void* q, const void* k, const void* v,
                                     float* probs, void* saved_pd) {
  std::vector<Problem> ps;
  for_each_varlen_seq(cu, d, drop, [&](const VarlenSeq& s) {
    Problem P;
    P.r = s.r;
    P.len_one = s.r.T;
    P.row0 = s.row0;
    P.drop = s.drop;
    P.q = at(q, s.row0 * s.r.ldq, dt);
    P.k = at(k, s.row0 * s.r.ldq, dt);
    P.v = at(v, s.row0 * s.r.ldq, dt);
    P.probs = probs + s.probs0;
    P.saved_pd = saved_pd ? at(saved_pd, s.probs0, dt) : nullptr;
    ps.push_back(P);
  });
  return ps;
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
  std::vector<Problem> ps = varlen_problems(cu_seqlens, d, dt, drop, q, k, v, probs, saved_pd);
  for (Problem& P : ps) P.ctx = at(ctx, P.row0 * P.r.ldc, dt);
  run_forward(ps, dt, d.HS);
}

void attention_backward_varlen(float* dq, float* dk, float* dv, const float* dctx, const void* q,
                               const void* k, const void* v, const float* probs, const int64_t* cu_seqlens,
                               const AttentionDims& d, DType dt, const DropoutSite& drop, void* saved_pd) {
  CT_CHECK(drop.p >= 0.0f && drop.p < 1.0f, "attention: dropout probability must be in [0, 1), got ", drop.p);
  std::vector<Problem> ps =
      varlen_problems(cu_seqlens, d, dt, drop, q, k, v, const_cast<float*>(probs), saved_pd);
  int64_t ld_dctx = 0;
  const int64_t H = d.NH * d.HS, ldc = d.ld_ctx ? d.ld_ctx : H;
  const void* dctx_mm = dctx_in_matmul_type(dctx, cu_seqlens[d.B], H, ldc, dt, ld_dctx);
  for (Problem& P : ps) {
    P.dq = dq + P.row0 * P.r.ldq;
    P.dk = dk + P.row0 * P.r.ldq;
    P.dv = dv + P.row0 * P.r.ldq;
    P.dctx_mm = at(dctx_mm, P.row0 * ld_dctx, dt);
    P.ld_dctx = ld_dctx;
  }
  run_backward(ps, dt, d.HS);
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

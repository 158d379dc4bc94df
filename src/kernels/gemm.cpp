// oneDNN matmul behind kernels::Gemm: one engine and stream for the process, one primitive per distinct
// descriptor (shapes, strides, dtypes, alpha, accumulate, bias presence), created on first use and kept.
#include "kernels/gemm.h"

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/bf16.h"
#include "core/error.h"
#include "core/tensor.h"
#include "kernels/cpu_features.h"

namespace ct::kernels {
namespace {

using Dims = dnnl::memory::dims;
using DT = dnnl::memory::data_type;

DT dnnl_type(DType t) {
  return t == DType::f32 ? DT::f32 : DT::bf16;
}

struct Runtime {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

Runtime& runtime() {
  static Runtime rt;
  return rt;
}

// The memory objects of one call in flight (they carry its data handles) and the argument map over them.
struct CallArgs {
  dnnl::memory a, b, c, bias, residual, scratch;
  std::unordered_map<int, dnnl::memory> map;
};

// A primitive's operand layouts (bias, residual and scratch empty when it has none).
struct Descs {
  dnnl::memory::desc a, b, c, bias, residual, scratch;
  int residual_post_op = 0;  // the binary post-op's index (after sum and eltwise)
};

CallArgs call_args(const Descs& d, const dnnl::engine& engine) {
  CallArgs t;
  auto mem = [&](const dnnl::memory::desc& md) { return dnnl::memory(md, engine, DNNL_MEMORY_NONE); };
  t.a = mem(d.a);
  t.b = mem(d.b);
  t.c = mem(d.c);
  t.map = {{DNNL_ARG_SRC, t.a}, {DNNL_ARG_WEIGHTS, t.b}, {DNNL_ARG_DST, t.c}};
  if (!d.bias.is_zero()) t.map.emplace(DNNL_ARG_BIAS, t.bias = mem(d.bias));
  if (!d.residual.is_zero())
    t.map.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(d.residual_post_op) | DNNL_ARG_SRC_1,
                  t.residual = mem(d.residual));
  if (d.scratch.get_size() > 0) t.map.emplace(DNNL_ARG_SCRATCHPAD, t.scratch = mem(d.scratch));
  return t;
}

struct Entry {
  dnnl::matmul prim;
  Descs descs;
  int64_t scratch_bytes = 0;
  CallArgs args;  // the calls outside parallel regions, one at a time
  std::mutex mu;  // guards args
};

// oneDNN's library-managed scratchpad (the brgemm kernels' packed operand blocks: megabytes at BERT-base
// shapes) is allocated and freed inside every execute; glibc then hands such blocks back to the kernel and
// maps them afresh, a page fault per 4 KiB, whenever they outgrow its heap thresholds (any block over 32 MiB,
// or after a trim). Each calling thread keeps one scratchpad instead, grown to the largest a product has
// asked for and reused by every later one.
struct Scratchpad {
  std::shared_ptr<void> mem;
  int64_t bytes = 0;
  void* get(int64_t need) {
    if (need > bytes) {
      mem.reset();  // the old block first: peak memory holds one
      mem = aligned_alloc_shared(need);
      bytes = need;
    }
    return mem.get();
  }
};

thread_local Scratchpad t_scratchpad;

struct Cache {
  std::mutex mu;
  std::map<std::vector<int64_t>, std::unique_ptr<Entry>> entries;
};

Cache& cache() {
  static Cache c;
  return c;
}

// Resolved layout: every stride explicit.
struct Layout {
  int64_t lda, ldb, ldc, sa, sb, sc, oa, ob, oc;
};

Layout resolve(const Gemm& g) {
  CT_CHECK(g.M >= 0 && g.N >= 0 && g.K >= 0 && g.batch >= 1 && g.batch_outer >= 1,
           "gemm: bad sizes batch_outer=", g.batch_outer, " batch=", g.batch, " M=", g.M, " N=", g.N,
           " K=", g.K);
  Layout l{};
  const int64_t a_cols = g.trans_a ? g.M : g.K, a_rows = g.trans_a ? g.K : g.M;
  const int64_t b_cols = g.trans_b ? g.K : g.N, b_rows = g.trans_b ? g.N : g.K;
  l.lda = g.lda ? g.lda : a_cols;
  l.ldb = g.ldb ? g.ldb : b_cols;
  l.ldc = g.ldc ? g.ldc : g.N;
  CT_CHECK(l.lda >= a_cols && l.ldb >= b_cols && l.ldc >= g.N,
           "gemm: leading dimension smaller than a row (lda=", l.lda, " need ", a_cols, ", ldb=", l.ldb,
           " need ", b_cols, ", ldc=", l.ldc, " need ", g.N, ")");
  l.sa = g.stride_a ? g.stride_a : a_rows * l.lda;
  l.sb = g.stride_b ? g.stride_b : b_rows * l.ldb;
  l.sc = g.stride_c ? g.stride_c : g.M * l.ldc;
  l.oa = g.outer_stride_a ? g.outer_stride_a : g.batch * l.sa;
  l.ob = g.outer_stride_b ? g.outer_stride_b : g.batch * l.sb;
  l.oc = g.outer_stride_c ? g.outer_stride_c : g.batch * l.sc;
  return l;
}

// g with every stride spelled out as resolve() found it, for a variant of the product over other buffers.
Gemm explicit_layout(const Gemm& g, const Layout& l) {
  Gemm e = g;
  e.lda = l.lda;
  e.ldb = l.ldb;
  e.ldc = l.ldc;
  e.stride_a = l.sa;
  e.stride_b = l.sb;
  e.stride_c = l.sc;
  e.outer_stride_a = l.oa;
  e.outer_stride_b = l.ob;
  e.outer_stride_c = l.oc;
  return e;
}

dnnl::memory::desc make_md(DType t, int64_t outer, int64_t batch, int64_t rows, int64_t cols,
                           int64_t row_stride, int64_t col_stride, int64_t batch_stride,
                           int64_t outer_stride) {
  return dnnl::memory::desc(Dims{outer, batch, rows, cols}, dnnl_type(t),
                            Dims{outer_stride, batch_stride, row_stride, col_stride});
}

dnnl::algorithm eltwise_algorithm(Activation a) {
  switch (a) {
    case Activation::gelu:
      return dnnl::algorithm::eltwise_gelu_erf;
    case Activation::gelu_tanh:
      return dnnl::algorithm::eltwise_gelu_tanh;
    case Activation::relu:
      return dnnl::algorithm::eltwise_relu;
    case Activation::tanh:
      return dnnl::algorithm::eltwise_tanh;
    case Activation::silu:
      return dnnl::algorithm::eltwise_swish;  // x * sigmoid(alpha * x), alpha = 1 below
  }
  return dnnl::algorithm::eltwise_relu;
}

Entry& get_entry(const Gemm& g, const Layout& l) {
  std::vector<int64_t> key{g.batch_outer,
                           g.batch,
                           g.M,
                           g.N,
                           g.K,
                           g.trans_a,
                           g.trans_b,
                           l.lda,
                           l.ldb,
                           l.ldc,
                           l.sa,
                           l.sb,
                           l.sc,
                           l.oa,
                           l.ob,
                           l.oc,
                           static_cast<int64_t>(g.a_type),
                           static_cast<int64_t>(g.b_type),
                           static_cast<int64_t>(g.c_type),
                           g.accumulate,
                           g.bias != nullptr,
                           g.has_activation ? 1 + static_cast<int64_t>(g.activation) : 0,
                           g.residual != nullptr};
  uint32_t alpha_bits;
  std::memcpy(&alpha_bits, &g.alpha, 4);
  key.push_back(alpha_bits);
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.entries.find(key);
  if (it != c.entries.end()) return *it->second;

  auto& rt = runtime();
  // op(A) is [M, K]: stored transposed, element (m, k) sits at k * lda + m.
  auto a_md = g.trans_a ? make_md(g.a_type, g.batch_outer, g.batch, g.M, g.K, 1, l.lda, l.sa, l.oa)
                        : make_md(g.a_type, g.batch_outer, g.batch, g.M, g.K, l.lda, 1, l.sa, l.oa);
  auto b_md = g.trans_b ? make_md(g.b_type, g.batch_outer, g.batch, g.K, g.N, 1, l.ldb, l.sb, l.ob)
                        : make_md(g.b_type, g.batch_outer, g.batch, g.K, g.N, l.ldb, 1, l.sb, l.ob);
  auto c_md = make_md(g.c_type, g.batch_outer, g.batch, g.M, g.N, l.ldc, 1, l.sc, l.oc);
  dnnl::memory::desc bias_md;
  if (g.bias) bias_md = dnnl::memory::desc(Dims{1, 1, 1, g.N}, DT::f32, Dims{g.N, g.N, g.N, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (g.alpha != 1.0f) attr.set_output_scales(0, {g.alpha});
  dnnl::memory::desc residual_md;
  if (g.residual) residual_md = make_md(DType::f32, 1, 1, g.M, g.N, l.ldc, 1, g.M * l.ldc, g.M * l.ldc);
  if (g.accumulate || g.has_activation || g.residual) {
    dnnl::post_ops po;
    if (g.accumulate) po.append_sum(1.0f);
    if (g.has_activation) {
      const float alpha = g.activation == Activation::silu ? 1.0f : 0.0f;
      po.append_eltwise(1.0f, eltwise_algorithm(g.activation), alpha, 0.0f);
    }
    if (g.residual) po.append_binary(dnnl::algorithm::binary_add, residual_md);
    attr.set_post_ops(po);
  }
  auto entry = std::make_unique<Entry>();
  try {
    auto desc = g.bias ? dnnl::matmul::desc(a_md, b_md, bias_md, c_md) : dnnl::matmul::desc(a_md, b_md, c_md);
    dnnl::matmul::primitive_desc pd(desc, attr, rt.engine);
    entry->prim = dnnl::matmul(pd);
    const dnnl::memory::desc scratch_md = pd.scratchpad_desc();
    entry->scratch_bytes = static_cast<int64_t>(scratch_md.get_size());
    entry->descs = {a_md,
                    b_md,
                    c_md,
                    bias_md,
                    residual_md,
                    scratch_md,
                    (g.accumulate ? 1 : 0) + (g.has_activation ? 1 : 0)};
  } catch (const dnnl::error& e) {
    const bool no_bf16 = (g.a_type == DType::bf16 || g.c_type == DType::bf16) && !bf16_matmul_supported();
    fail(
        "gemm: oneDNN has no matmul for batch_outer=", g.batch_outer, " batch=", g.batch, " M=", g.M,
        " N=", g.N, " K=", g.K, " types ", dtype_name(g.a_type), "x", dtype_name(g.b_type), "->",
        dtype_name(g.c_type), ": ", e.what(),
        no_bf16 ? " (" + bf16_matmul_unavailable_reason() + "; check kernels::bf16_matmul_supported())" : "");
  }
  entry->args = call_args(entry->descs, rt.engine);
  Entry& ref = *entry;
  c.entries.emplace(std::move(key), std::move(entry));
  return ref;
}

template <class T>
double load(const void* p, int64_t i) {
  if constexpr (std::is_same_v<T, float>)
    return static_cast<const float*>(p)[i];
  else
    return to_f32(static_cast<const bf16*>(p)[i]);
}

double load_t(DType t, const void* p, int64_t i) {
  return t == DType::f32 ? load<float>(p, i) : load<bf16>(p, i);
}

// Packed batches change their token count every step, and tokens are the rows (M) of a linear layer and the
// reduction (K) of its weight gradient. One primitive per count would grow the cache without bound (and
// create, or JIT, a kernel per count: ~20 ms each here), so an unbatched product whose M or K is not a
// multiple of kQuantum runs as its multiple-of-kQuantum part plus the remainder zero-padded in a scratch copy
// (rows to a multiple of kTailQuantum, the reduction to kQuantum): every shape it creates has M a multiple of
// kTailQuantum and K a multiple of kQuantum.
constexpr int64_t kQuantum = 64;
constexpr int64_t kTailQuantum = 16;

// Separate per role: a row tail's product may itself split its reduction.
thread_local std::vector<char> t_row_a, t_row_c, t_row_r, t_red_a, t_red_b;

void* zeroed(std::vector<char>& v, int64_t bytes) {
  v.assign(static_cast<size_t>(bytes), 0);
  return v.data();
}

// Copies `rows` runs of `len` elements: run r from src + r * src_ld to dst + r * dst_ld (elements of type t).
void copy_runs(void* dst, int64_t dst_ld, const void* src, int64_t src_ld, int64_t rows, int64_t len,
               DType t) {
  const int64_t n = dtype_size(t);
#pragma omp parallel for schedule(static) if (rows * len * n > (1 << 20))
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(static_cast<char*>(dst) + r * dst_ld * n, static_cast<const char*>(src) + r * src_ld * n,
                static_cast<size_t>(len * n));
}

const void* at_elem(const void* p, int64_t i, DType t) {
  return static_cast<const char*>(p) + i * dtype_size(t);
}

// Rows [m0, M) of C (+)= op(A) op(B) through a kQuantum-row scratch. The scratch keeps A's orientation, so
// every copy is a run of contiguous elements.
void gemm_row_tail(const Gemm& g, const Layout& l, int64_t m0, const void* a, const void* b, void* c) {
  const int64_t rem = g.M - m0;
  // Padded to a multiple of kTailQuantum rows, not kQuantum: a padded row costs a whole row of the product
  // (at ~1,240 rows a batch, a 64-row tail computed ~3% of a layer's rows for nothing), and four tail shapes
  // per product still bound the cache.
  const int64_t mt = std::min(kQuantum, (rem + kTailQuantum - 1) / kTailQuantum * kTailQuantum);
  Gemm t = g;
  t.M = mt;
  t.ldb = l.ldb;
  t.ldc = g.N;
  void* as = zeroed(t_row_a, mt * g.K * dtype_size(g.a_type));
  if (g.trans_a) {  // A stored [K, M]: for each k, columns m0.. are contiguous; scratch [K, mt]
    t.lda = mt;
    copy_runs(as, mt, at_elem(a, m0, g.a_type), l.lda, g.K, rem, g.a_type);
  } else {  // A stored [M, K]: rows m0.. ; scratch [mt, K]
    t.lda = g.K;
    copy_runs(as, g.K, at_elem(a, m0 * l.lda, g.a_type), l.lda, rem, g.K, g.a_type);
  }
  void* cs = zeroed(t_row_c, mt * g.N * dtype_size(g.c_type));
  void* c_tail = const_cast<void*>(at_elem(c, m0 * l.ldc, g.c_type));
  if (g.accumulate) copy_runs(cs, g.N, c_tail, l.ldc, rem, g.N, g.c_type);
  if (g.residual) {
    void* rs = zeroed(t_row_r, mt * g.N * 4);
    copy_runs(rs, g.N, g.residual + m0 * l.ldc, l.ldc, rem, g.N, DType::f32);
    t.residual = static_cast<const float*>(rs);
  }
  gemm(t, as, b, cs);
  copy_runs(c_tail, l.ldc, cs, g.N, rem, g.N, g.c_type);
}

// C += op(A)[:, k0:K] op(B)[k0:K, :] through kQuantum-deep scratches in the operands' own orientation (f32 C
// only).
void gemm_reduction_tail(const Gemm& g, const Layout& l, int64_t k0, const void* a, const void* b, void* c) {
  const int64_t rem = g.K - k0;
  Gemm t = g;
  t.K = kQuantum;
  t.ldc = l.ldc;
  t.accumulate = true;
  t.bias = nullptr;  // added once, by the first part
  void* as = zeroed(t_red_a, g.M * kQuantum * dtype_size(g.a_type));
  if (g.trans_a) {  // A stored [K, M]: rows k0.. ; scratch [kQuantum, M]
    t.lda = g.M;
    copy_runs(as, g.M, at_elem(a, k0 * l.lda, g.a_type), l.lda, rem, g.M, g.a_type);
  } else {  // A stored [M, K]: columns k0.. of every row; scratch [M, kQuantum]
    t.lda = kQuantum;
    copy_runs(as, kQuantum, at_elem(a, k0, g.a_type), l.lda, g.M, rem, g.a_type);
  }
  void* bs = zeroed(t_red_b, kQuantum * g.N * dtype_size(g.b_type));
  if (g.trans_b) {  // B stored [N, K]: columns k0.. of every row; scratch [N, kQuantum]
    t.ldb = kQuantum;
    copy_runs(bs, kQuantum, at_elem(b, k0, g.b_type), l.ldb, g.N, rem, g.b_type);
  } else {  // B stored [K, N]: rows k0.. ; scratch [kQuantum, N]
    t.ldb = g.N;
    copy_runs(bs, g.N, at_elem(b, k0 * l.ldb, g.b_type), l.ldb, rem, g.N, g.b_type);
  }
  gemm(t, as, bs, c);
}

// Calls f(offset) for the start of every stored row run of an operand: `rows` runs of `cols` contiguous
// elements per (outer, batch) matrix. Runs are spread over the threads when there is enough to convert (the
// runs are short: attention's are one head wide).
template <class F>
void for_each_run(int64_t outer, int64_t batch, int64_t rows, int64_t cols, int64_t o_stride,
                  int64_t b_stride, int64_t ld, F&& f) {
  const int64_t per_outer = batch * rows, runs = outer * per_outer;
#pragma omp parallel for schedule(static) if (runs * cols > (1 << 15))
  for (int64_t i = 0; i < runs; ++i) {
    const int64_t o = i / per_outer, bt = (i % per_outer) / rows, r = i % rows;
    f(o * o_stride + bt * b_stride + r * ld);
  }
}

// Number of elements from an operand's first element to one past its last.
int64_t extent(int64_t outer, int64_t batch, int64_t rows, int64_t cols, int64_t o_stride, int64_t b_stride,
               int64_t ld) {
  return (outer - 1) * o_stride + (batch - 1) * b_stride + (rows - 1) * ld + cols;
}

thread_local std::vector<float> t_wide_a, t_wide_b, t_wide_c;

// An f32 copy of a bf16 operand in the same layout (gaps between runs are left unset: the product never
// reads them).
const float* widen(std::vector<float>& v, const bf16* p, int64_t outer, int64_t batch, int64_t rows,
                   int64_t cols, int64_t o_stride, int64_t b_stride, int64_t ld) {
  v.resize(static_cast<size_t>(extent(outer, batch, rows, cols, o_stride, b_stride, ld)));
  float* w = v.data();
  for_each_run(outer, batch, rows, cols, o_stride, b_stride, ld,
               [&](int64_t i) { bf16_to_f32(p + i, w + i, cols); });
  return w;
}

// Attention's per-head operands are [T, HS] slices of [B, T, NH*HS] rows: the matrices of a batch interleave.
// For bf16, oneDNN 2.6 gives such an operand its brgemm (AMX / AVX512-BF16) kernel only at some row strides
// and otherwise falls back to a jit gemm that ran Q K^T at 45-50 GFLOP/s on a Sapphire Rapids VM (AMX
// products there: 300-700), 16% of a BERT-base bf16 step. Such an operand is copied into dense [outer, batch,
// rows, cols] matrices first (Q and K: 2.4 MB each at BERT-base shapes), which brgemm takes: Q K^T 285
// GFLOP/s. f32 keeps the strided operands: its dense copies ran slower there (jit gemm 75 GFLOP/s).
bool interleaved(int64_t batch, int64_t rows, int64_t ld, int64_t stride) {
  return batch > 1 && stride < rows * ld;
}

// Matrices of op(X) (stored transposed when trans), row stride ld, batch stride s, outer stride o, copied to
// dense row-major [outer, batch, rows, cols].
void copy_dense(void* dense, const void* x, DType t, int64_t outer, int64_t batch, int64_t rows, int64_t cols,
                bool trans, int64_t ld, int64_t s, int64_t o) {
  const int64_t n = dtype_size(t), mats = outer * batch;
#pragma omp parallel for schedule(static) if (mats * rows * cols > (1 << 15))
  for (int64_t m = 0; m < mats; ++m) {
    const char* src = static_cast<const char*>(x) + ((m / batch) * o + (m % batch) * s) * n;
    char* dst = static_cast<char*>(dense) + m * rows * cols * n;
    if (!trans) {
      for (int64_t r = 0; r < rows; ++r)
        std::memcpy(dst + r * cols * n, src + r * ld * n, static_cast<size_t>(cols * n));
    } else {  // bf16 only (densifies): 2-byte elements
      const uint16_t* xs = reinterpret_cast<const uint16_t*>(src);
      uint16_t* ds = reinterpret_cast<uint16_t*>(dst);
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t r = 0; r < rows; ++r) ds[r * cols + c] = xs[c * ld + r];
    }
  }
}

thread_local std::vector<char> t_dense_a, t_dense_b;

// Whether gemm() first copies op(A) or op(B) into dense matrices (above).
bool densifies(const Gemm& g, const Layout& l) {
  if (g.a_type != DType::bf16 || (g.batch == 1 && g.batch_outer == 1)) return false;
  return interleaved(g.batch, g.trans_a ? g.K : g.M, l.lda, l.sa) ||
         interleaved(g.batch, g.trans_b ? g.N : g.K, l.ldb, l.sb);
}

// One operand of gemm_densified, op(X) of rows x cols per matrix: copied into `buf` when its matrices
// interleave, its layout fields then describing the dense copy.
const void* densify_operand(std::vector<char>& buf, const void* x, DType t, const Gemm& g, int64_t rows,
                            int64_t cols, bool& trans, int64_t& ld, int64_t& stride, int64_t& outer) {
  if (!interleaved(g.batch, trans ? cols : rows, ld, stride)) return x;
  buf.resize(static_cast<size_t>(g.batch_outer * g.batch * rows * cols * dtype_size(t)));
  copy_dense(buf.data(), x, t, g.batch_outer, g.batch, rows, cols, trans, ld, stride, outer);
  trans = false;
  ld = cols;
  stride = rows * cols;
  outer = g.batch * rows * cols;
  return buf.data();
}

void gemm_densified(const Gemm& g, const Layout& l, const void* a, const void* b, void* c) {
  Gemm d = explicit_layout(g, l);
  a = densify_operand(t_dense_a, a, g.a_type, g, g.M, g.K, d.trans_a, d.lda, d.stride_a, d.outer_stride_a);
  b = densify_operand(t_dense_b, b, g.b_type, g, g.K, g.N, d.trans_b, d.ldb, d.stride_b, d.outer_stride_b);
  gemm(d, a, b, c);
}

// oneDNN 2.6's AVX-512 brgemm reads a row-major f32 B in place, and when B's rows lie a multiple of 4 KiB
// apart that is not a power of two (BERT-base's FFN: 3072 floats, 12 KiB) its reads conflict in cache:
// [1536, 768] x [768, 3072] ran at 120-180 GFLOP/s where neighbouring shapes run at 240-300 (Sapphire Rapids
// VM; 20 and 24 KiB rows the same; 4 and 16 KiB rows unaffected). That was FFN-down's input gradient and
// weight gradient, and the matmul peak probe. Such a B is multiplied from a copy whose rows are 64 bytes
// further apart; the copy costs a few percent of the product. Not on AVX2 (oneDNN's jit gemm packs B itself;
// a copy only loses 5-10% there) and not for bf16 (AMX and AVX512-BF16 kernels pack B; the copy loses).
thread_local std::vector<char> t_pad_b;

bool pads_b_rows(const Gemm& g, const Layout& l) {
  static const bool brgemm_f32 = cpu_isa_at_least_avx512();
  const int64_t row_bytes = l.ldb * dtype_size(g.b_type);
  return brgemm_f32 && g.b_type == DType::f32 && !g.trans_b && g.batch == 1 && g.batch_outer == 1 &&
         g.K > 1 && row_bytes % 4096 == 0 && (row_bytes & (row_bytes - 1)) != 0;
}

// oneDNN 2.x has no bf16 matmul below AVX512 (bf16_matmul_supported() is false). There a bf16 product runs
// widened: the operands are converted to f32 and multiplied in f32, then a bf16 C is rounded once. That is
// the arithmetic of a bf16 matmul (the product of two bf16 values is exact in f32, and oneDNN accumulates
// bf16 products in f32) up to the order of the sums, so the bf16 path gives bf16 results, and is tested, on
// every CPU; at f32 speed less the conversions, which is why --bf16 itself runs f32 there
// (model::resolve_precision).
void widened(const Gemm& g, const Layout& l, const void* a, const void* b, void* c) {
  Gemm w = explicit_layout(g, l);
  w.a_type = w.b_type = w.c_type = DType::f32;
  const float* af = static_cast<const float*>(a);
  const float* bf = static_cast<const float*>(b);
  if (g.a_type == DType::bf16) {
    af = widen(t_wide_a, static_cast<const bf16*>(a), g.batch_outer, g.batch, g.trans_a ? g.K : g.M,
               g.trans_a ? g.M : g.K, l.oa, l.sa, l.lda);
    bf = widen(t_wide_b, static_cast<const bf16*>(b), g.batch_outer, g.batch, g.trans_b ? g.N : g.K,
               g.trans_b ? g.K : g.N, l.ob, l.sb, l.ldb);
  }
  if (g.c_type == DType::f32) {
    gemm(w, af, bf, c);
    return;
  }
  bf16* cb = static_cast<bf16*>(c);
  if (g.accumulate)
    widen(t_wide_c, cb, g.batch_outer, g.batch, g.M, g.N, l.oc, l.sc, l.ldc);
  else
    t_wide_c.resize(static_cast<size_t>(extent(g.batch_outer, g.batch, g.M, g.N, l.oc, l.sc, l.ldc)));
  float* cf = t_wide_c.data();
  gemm(w, af, bf, cf);
  for_each_run(g.batch_outer, g.batch, g.M, g.N, l.oc, l.sc, l.ldc,
               [&](int64_t i) { f32_to_bf16(cf + i, cb + i, g.N); });
}

// Binds this call's buffers to t and runs e's primitive on `stream`.
void execute(const Entry& e, CallArgs& t, const Gemm& g, const void* a, const void* b, void* c,
             dnnl::stream& stream) {
  t.a.set_data_handle(const_cast<void*>(a));
  t.b.set_data_handle(const_cast<void*>(b));
  t.c.set_data_handle(c);
  if (g.bias) t.bias.set_data_handle(const_cast<float*>(g.bias));
  if (g.residual) t.residual.set_data_handle(const_cast<float*>(g.residual));
  if (e.scratch_bytes > 0) t.scratch.set_data_handle(t_scratchpad.get(e.scratch_bytes));
  e.prim.execute(stream, t.map);
  stream.wait();
}

// Inside a parallel region each thread runs its own products at once, so the entry's call arguments and the
// process stream are not shared then: each thread keeps its own arguments per entry (entries live as long as
// the process) and its own stream. oneDNN executes a primitive on the calling thread alone inside a parallel
// region (it limits its thread count to the current team's, 1 for a nested region).
void execute_concurrently(const Entry& e, const Gemm& g, const void* a, const void* b, void* c) {
  thread_local dnnl::stream stream{runtime().engine};
  thread_local std::unordered_map<const Entry*, CallArgs> mine;
  auto [it, fresh] = mine.try_emplace(&e);
  if (fresh) it->second = call_args(e.descs, runtime().engine);
  execute(e, it->second, g, a, b, c, stream);
}

}  // namespace

void gemm(const Gemm& g, const void* a, const void* b, void* c) {
  const Layout l = resolve(g);
  CT_CHECK(g.a_type == g.b_type, "gemm: operand types differ (", dtype_name(g.a_type), " x ",
           dtype_name(g.b_type), "); convert one side first");
  CT_CHECK(!(g.bias && g.alpha != 1.0f), "gemm: alpha != 1 with a bias is not supported");
  CT_CHECK(!(g.has_activation && g.accumulate), "gemm: an activation with accumulate is not supported");
  CT_CHECK(!g.residual || (!g.accumulate && g.batch == 1 && g.batch_outer == 1),
           "gemm: a residual needs an unbatched product without accumulate");
  if (g.M == 0 || g.N == 0) return;
  if (g.K == 0) {
    // Nothing to multiply: C = bias or 0 (or unchanged when accumulating).
    CT_CHECK(g.accumulate && !g.bias, "gemm: K = 0 is only supported with accumulate and no bias");
    return;
  }
  if ((g.a_type == DType::bf16 || g.c_type == DType::bf16) && !bf16_matmul_supported()) {
    widened(g, l, a, b, c);
    return;
  }
  if (g.batch == 1 && g.batch_outer == 1 && g.quantize_shape) {
    if (g.M > kQuantum && g.M % kQuantum != 0) {  // rows are independent: the bulk, then the tail
      Gemm top = g;
      top.M = g.M / kQuantum * kQuantum;
      top.lda = l.lda;
      top.ldb = l.ldb;
      top.ldc = l.ldc;
      gemm(top, a, b, c);
      gemm_row_tail(g, l, top.M, a, b, c);
      return;
    }
    // Splitting the reduction adds a partial sum into C: only where C is f32 (no second rounding to bf16).
    if (g.K > kQuantum && g.K % kQuantum != 0 && g.c_type == DType::f32 && !g.has_activation && !g.residual) {
      Gemm top = g;
      top.K = g.K / kQuantum * kQuantum;
      top.lda = l.lda;
      top.ldb = l.ldb;
      top.ldc = l.ldc;
      gemm(top, a, b, c);
      gemm_reduction_tail(g, l, top.K, a, b, c);
      return;
    }
  }
  if (densifies(g, l)) {
    gemm_densified(g, l, a, b, c);
    return;
  }
  if (pads_b_rows(g, l)) {
    const int64_t ld = l.ldb + 64 / dtype_size(g.b_type);
    t_pad_b.resize(static_cast<size_t>(g.K * ld * dtype_size(g.b_type)));
    copy_runs(t_pad_b.data(), ld, b, l.ldb, g.K, g.N, g.b_type);
    Gemm p = g;
    p.lda = l.lda;
    p.ldc = l.ldc;
    p.ldb = ld;
    gemm(p, a, t_pad_b.data(), c);
    return;
  }
  Entry& e = get_entry(g, l);
  if (omp_in_parallel()) {
    execute_concurrently(e, g, a, b, c);
    return;
  }
  std::lock_guard<std::mutex> lock(e.mu);
  execute(e, e.args, g, a, b, c, runtime().stream);
}

void gemm_bf16_widened(const Gemm& g, const void* a, const void* b, void* c) {
  CT_CHECK(g.a_type == g.b_type, "gemm: operand types differ (", dtype_name(g.a_type), " x ",
           dtype_name(g.b_type), "); convert one side first");
  const Layout l = resolve(g);
  if (g.M == 0 || g.N == 0 || g.K == 0) return gemm(g, a, b, c);
  widened(g, l, a, b, c);
}

void gemm_reference(const Gemm& g, const void* a, const void* b, void* c) {
  const Layout l = resolve(g);
  for (int64_t o = 0; o < g.batch_outer; ++o)
    for (int64_t bt = 0; bt < g.batch; ++bt)
      for (int64_t m = 0; m < g.M; ++m)
        for (int64_t n = 0; n < g.N; ++n) {
          double acc = 0.0;
          for (int64_t k = 0; k < g.K; ++k) {
            const int64_t ia = o * l.oa + bt * l.sa + (g.trans_a ? k * l.lda + m : m * l.lda + k);
            const int64_t ib = o * l.ob + bt * l.sb + (g.trans_b ? n * l.ldb + k : k * l.ldb + n);
            acc += load_t(g.a_type, a, ia) * load_t(g.b_type, b, ib);
          }
          acc *= g.alpha;
          if (g.bias) acc += g.bias[n];
          if (g.has_activation) acc = activation_reference(acc, g.activation);
          const int64_t ic = o * l.oc + bt * l.sc + m * l.ldc + n;
          if (g.residual) acc += g.residual[ic];
          if (g.accumulate) acc += load_t(g.c_type, c, ic);
          if (g.c_type == DType::f32)
            static_cast<float*>(c)[ic] = static_cast<float>(acc);
          else
            static_cast<bf16*>(c)[ic] = to_bf16(static_cast<float>(acc));
        }
}

int64_t gemm_cache_size() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return static_cast<int64_t>(c.entries.size());
}

}  // namespace ct::kernels

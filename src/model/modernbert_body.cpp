// ModernBERT's body on the encoder engine, forward and backward, as EncoderModel members so it shares the
// slab, the bf16 weight copies, the dropout keys and the heads' interface with the BERT families while its
// own activations live in ModernBuffers (the BERT body's Buffers stay as they are).
//
// Per layer l (pre-norm; attn_norm is the identity on layer 0):
//   h1 = attn_norm(x); qkv = h1 Wqkv^T; q, k rotated (theta global_rope_theta on global layers, l % n == 0,
//   local_rope_theta elsewhere); ctx = attention(q, k, v) over all keys or a band of local_attention / 2 each
//   side; res1 = x + drop(ctx Wo^T); h2 = mlp_norm(res1); [in | gate] = h2 Wi^T;
//   x' = res1 + Wo(drop(act(in) * gate))
// then final_norm. The residual stream stays f32; matmul operands are bf16 copies in bf16 mode (autocast),
// norms, softmax, rotary and GeGLU are f32. Padded batches mask padded keys (and the band) additively as HF's
// eager path does; packed batches run each feature on its own rows with positions restarting at 0, which is
// what HF's unpadded flash-attention path computes.
//
// Local layers run banded when a sequence is long (BandPlan): queries in blocks of C = max(2w, 16) (w =
// local_attention / 2), each block attending over the keys of its rows +- w only, so a layer costs O(T x w)
// instead of O(T^2). Each block is the attention kernel's own problem on the rows [s - w, e + w) (its band
// mask is translation invariant); the block's outputs are its middle rows, and backward feeds the block only
// its middle rows' gradients, so dq/dk/dv, which the kernel adds into, sum exactly the band's terms. With
// attention dropout on, the full masked computation runs instead, keeping the padded layout's dropout
// counters (ModernBERT's configs have none).
//
// Dropout sites follow the BERT body's numbering: 0 embeddings, 1 + 3l attention probabilities, 2 + 3l the
// attention output, 3 + 3l the MLP's gated activation, 1 + 3L + k the head's.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/geglu.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "kernels/rotary.h"
#include "model/encoder_model.h"
#include "model/head.h"
#include "model/model_ops.h"

namespace ct::model {

namespace {

// One layer's activations kept for backward (f32 unless noted; "run precision" = the matmul operand type).
struct MbLayer {
  float* mean1 = nullptr;  // attn_norm statistics (layer > 0)
  float* rstd1 = nullptr;
  char* h1 = nullptr;      // [N, H] attn_norm output, run precision (layer 0 in f32: the layer input itself)
  char* qkv = nullptr;     // [N, 3H] rotated q, k and v, run precision
  float* probs = nullptr;  // attention probabilities before dropout
  char* ctx = nullptr;     // [N, H] run precision
  float* res1 = nullptr;   // [N, H] x + attention output (mlp_norm input)
  float* mean2 = nullptr;
  float* rstd2 = nullptr;
  char* h2 = nullptr;   // [N, H] mlp_norm output, run precision
  float* wi = nullptr;  // [N, 2I] Wi output (GeGLU input)
  char* gd = nullptr;   // [N, I] dropout(act(in) * gate), run precision (the MLP Wo operand)
};

// The blocks of a banded local layer over one sequence of `len` rows: block i covers queries [s, e) and
// computes over rows [a, b) = [s - w, e + w) clipped to the sequence. A sequence shorter than `min_len` is
// one block (the banded form would not save work).
struct BandBlock {
  int64_t s, e, a, b;
};

struct BandPlan {
  int64_t w = 0, C = 0, min_len = 0;
  explicit BandPlan(int64_t window)
      : w(window), C(std::max<int64_t>(2 * window, 16)), min_len(2 * (C + 2 * w)) {}
  template <class Fn>
  void blocks(int64_t len, Fn&& fn) const {
    if (len < min_len) {
      fn(BandBlock{0, len, 0, len});
      return;
    }
    for (int64_t s = 0; s < len; s += C) {
      const int64_t e = std::min(len, s + C);
      fn(BandBlock{s, e, std::max<int64_t>(0, s - w), std::min(len, e + w)});
    }
  }
  int64_t probs_elems(int64_t len, int64_t NH) const {
    int64_t n = 0;
    blocks(len, [&](const BandBlock& k) { n += NH * (k.b - k.a) * (k.b - k.a); });
    return n;
  }
};

// One sequence of a batch: its first row, its length, its attention-mask row (padded batches) or null.
struct Seq {
  int64_t row0, len;
  const float* mask;
};

std::vector<Seq> sequences(int64_t B, int64_t T, const std::vector<int64_t>& cu, const float* mask) {
  std::vector<Seq> seqs;
  for (int64_t b = 0; b < B; ++b)
    seqs.push_back(cu.empty() ? Seq{b * T, T, mask ? mask + b * T : nullptr}
                              : Seq{cu[b], cu[b + 1] - cu[b], nullptr});
  return seqs;
}

// d: the layer's dims (NH, HS, ld_qkv = 3H, window); B, T are set per block. No dropout (see above).
void band_forward(char* ctx, float* probs, const char* qkv, char* ctx_block, const std::vector<Seq>& seqs,
                  kernels::AttentionDims d, DType dt) {
  const int64_t H = d.NH * d.HS, esz = dtype_size(dt);
  const BandPlan band(d.window);
  int64_t p0 = 0;
  for (const Seq& q : seqs)
    band.blocks(q.len, [&](const BandBlock& k) {
      d.B = 1;
      d.T = k.b - k.a;
      d.drop_T = 0;
      d.ld_ctx = H;
      const char* rows = qkv + (q.row0 + k.a) * 3 * H * esz;
      kernels::attention_forward(ctx_block, probs + p0, rows, rows + H * esz, rows + 2 * H * esz,
                                 q.mask ? q.mask + k.a : nullptr, d, dt, kernels::DropoutSite{});
      std::memcpy(ctx + (q.row0 + k.s) * H * esz, ctx_block + (k.s - k.a) * H * esz,
                  static_cast<size_t>((k.e - k.s) * H * esz));
      p0 += d.NH * d.T * d.T;
    });
}

// dq/dk/dv ADDED into dqkv [N, 3H]; each block sees its middle rows' dctx only.
void band_backward(float* dqkv, const float* dctx, const char* qkv, const float* probs, float* dctx_block,
                   const std::vector<Seq>& seqs, kernels::AttentionDims d, DType dt) {
  const int64_t H = d.NH * d.HS, esz = dtype_size(dt);
  const BandPlan band(d.window);
  int64_t p0 = 0;
  for (const Seq& q : seqs)
    band.blocks(q.len, [&](const BandBlock& k) {
      d.B = 1;
      d.T = k.b - k.a;
      d.drop_T = 0;
      d.ld_ctx = H;
      zero_f32(dctx_block, d.T * H);
      copy_f32(dctx_block + (k.s - k.a) * H, dctx + (q.row0 + k.s) * H, (k.e - k.s) * H);
      const char* rows = qkv + (q.row0 + k.a) * 3 * H * esz;
      float* drows = dqkv + (q.row0 + k.a) * 3 * H;
      kernels::attention_backward(drows, drows + H, drows + 2 * H, dctx_block, rows, rows + H * esz,
                                  rows + 2 * H * esz, probs + p0, q.mask ? q.mask + k.a : nullptr, d, dt,
                                  kernels::DropoutSite{});
      p0 += d.NH * d.T * d.T;
    });
}

}  // namespace

struct EncoderModel::ModernBuffers {
  int64_t B = 0, T = 0, N = 0;
  int64_t cap_tokens = 0, cap_global = 0, cap_local = 0;  // rows; probabilities of a global / local layer
  bool all_layers = true;
  int64_t bytes = 0;
  std::vector<std::shared_ptr<void>> owners;
  std::vector<MbLayer> layers;  // L entries (1 in inference)
  std::vector<float*> xs;       // residual stream entering layer l, L + 1 entries (2 in inference)
  float* emb_sum = nullptr;     // [N, H] token embedding rows (the embedding norm's input)
  float *emb_mean = nullptr, *emb_rstd = nullptr;
  float *fmean = nullptr, *frstd = nullptr;  // final_norm statistics
  float* hidden_f32 = nullptr;               // [N, H] final_norm output
  bf16* hidden_bf = nullptr;                 // its bf16 copy (bf16 mode)
  float* mask = nullptr;                     // [N] 0/1 (padded with a mask)
  // Scratch: forward temporaries, then backward gradients.
  float *qkv_f = nullptr, *tmp = nullptr, *nf = nullptr, *g = nullptr;
  float *dx = nullptr, *dres = nullptr, *dh = nullptr, *dctx = nullptr, *dg = nullptr, *dwi = nullptr,
        *dqkv = nullptr;
  bf16 *d_b = nullptr, *dwi_b = nullptr, *dqkv_b = nullptr;
  char* ctx_block = nullptr;    // [N, H] a band block's context rows, run precision
  float* dctx_block = nullptr;  // [N, H] a band block's context gradient (its middle rows)
  kernels::RotaryTable rope_global, rope_local;

  std::vector<int64_t> cu;
  std::vector<int32_t> ids, pos;
  bool have_forward = false, kept = false, has_mask = false;
  // Global layers share one probabilities buffer (see recompute_threshold_bytes); probs_layer is the layer
  // whose probabilities it holds.
  bool recompute_global = false;
  int64_t probs_layer = -1;
  StepOptions opts;

  template <class T>
  T* alloc(int64_t n) {
    auto p = aligned_alloc_shared(std::max<int64_t>(n, 1) * static_cast<int64_t>(sizeof(T)));
    owners.push_back(p);
    bytes += n * static_cast<int64_t>(sizeof(T));
    return static_cast<T*>(p.get());
  }
};

// Above this many bytes of attention probabilities per global layer (ModernBERT-base at 8,192 tokens: 3.2
// GB), the global layers share one buffer and backward recomputes each layer's probabilities (one more
// attention forward per global layer) instead of keeping L / n of them. CORETRAIN_RECOMPUTE_ATTENTION_MB
// overrides the default of 256 (0: always recompute).
static int64_t recompute_threshold_bytes() {
  const char* env = std::getenv("CORETRAIN_RECOMPUTE_ATTENTION_MB");
  const int64_t mb = env && *env ? std::atoll(env) : 256;
  return std::max<int64_t>(0, mb) << 20;
}

int64_t EncoderModel::modernbert_activation_bytes() const {
  return mb_ ? mb_->bytes : 0;
}

// HF's _init_weights: truncated normal (cutoff initializer_cutoff_factor x std) with std initializer_range
// for tok_embeddings, Wqkv and Wi; initializer_range / sqrt(2 L) for the output projections (attn.Wo,
// mlp.Wo) and head.dense; hidden_size^-0.5 for the classifier; norms 1, biases 0. The padding row of
// tok_embeddings keeps its random values, as HF's init_weight (trunc_normal_ over the whole table) leaves it.
// Chunks of 4096 draw from disjoint Generator ranges, so values do not depend on the thread count.
void EncoderModel::init_weights_modernbert(uint64_t seed,
                                           const std::function<bool(const std::string&)>& selected_name) {
  const ModelConfig& c = config_;
  const double std_in = c.initializer_range;
  const double std_out = c.initializer_range / std::sqrt(2.0 * static_cast<double>(c.num_hidden_layers));
  const double std_final = 1.0 / std::sqrt(static_cast<double>(c.hidden_size));
  const double cut = c.initializer_cutoff_factor;
  constexpr int64_t kChunk = 4096;
  constexpr uint64_t kWordsPerValue = 64;  // room for the rejected draws (4.6% at a cutoff of 2)
  uint64_t counter = 0;
  auto ends_with = [](const std::string& s, const char* suffix) {
    const size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
  };
  for (const ParamInfo& p : layout_.params) {
    const bool norm = p.name.find("norm.weight") != std::string::npos;
    const bool bias = ends_with(p.name, ".bias");
    const bool random = !norm && !bias;
    const int64_t n = p.numel();
    if (selected_name(p.name)) {
      float* w = params_ + p.offset;
      if (random) {
        double sd = std_in;
        if (ends_with(p.name, "Wo.weight") || p.name == "head.dense.weight") sd = std_out;
        if (p.name == "classifier.weight") sd = std_final;
        const double lim = cut * sd;
        const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
        for (int64_t ch = 0; ch < chunks; ++ch) {
          Generator g(seed);
          g.set_state({seed, counter + static_cast<uint64_t>(ch * kChunk) * kWordsPerValue});
          const int64_t e = std::min(n, (ch + 1) * kChunk);
          for (int64_t i = ch * kChunk; i < e; ++i) {
            double v = g.normal() * sd;
            while (std::fabs(v) > lim) v = g.normal() * sd;
            w[i] = static_cast<float>(v);
          }
        }
      } else {
        const float v = norm ? 1.0f : 0.0f;
        for (int64_t i = 0; i < n; ++i) w[i] = v;
      }
    }
    if (random) counter += static_cast<uint64_t>(n) * kWordsPerValue;
  }
  weights_dirty_ = true;
}

float EncoderModel::forward_modernbert(const Batch& batch, const StepOptions& options) {
  const ModelConfig& c = config_;
  const int64_t B = batch.B, T = batch.T;
  CT_CHECK(B > 0 && T > 0, "model forward: batch shape [", B, ", ", T, "] must be positive");
  CT_CHECK(options.row_keys.empty() || static_cast<int64_t>(options.row_keys.size()) == B,
           "model forward: ", options.row_keys.size(), " dropout row keys for a batch of ", B);
  CT_CHECK(batch.input_ids != nullptr, "model forward: batch has no input_ids");
  CT_CHECK(T <= c.max_position_embeddings, "model forward: sequence length ", T,
           " exceeds max_position_embeddings ", c.max_position_embeddings);
  const bool packed = batch.seq_lens != nullptr;
  const int64_t H = c.hidden_size, I = c.intermediate_size, NH = c.num_attention_heads,
                L = c.num_hidden_layers;
  std::vector<int64_t> cu;
  if (packed) {
    CT_CHECK(batch.attention_mask == nullptr,
             "model forward: a packed batch (seq_lens) has no padding, so it takes no attention_mask");
    cu.assign(static_cast<size_t>(B + 1), 0);
    for (int64_t b = 0; b < B; ++b) {
      CT_CHECK(batch.seq_lens[b] >= 1 && batch.seq_lens[b] <= T, "model forward: seq_lens[", b, "] is ",
               batch.seq_lens[b], ", expected 1..", T, " (T = the padded length the packed batch replaces)");
      cu[b + 1] = cu[b] + batch.seq_lens[b];
    }
  }
  const int64_t N = packed ? cu[B] : B * T;
  for (int64_t i = 0; i < N; ++i)
    CT_CHECK(batch.input_ids[i] >= 0 && batch.input_ids[i] < c.vocab_size, "model forward: input_ids[", i,
             "] is ", batch.input_ids[i], ", outside the vocabulary [0, ", c.vocab_size, ")");
  if (weights_dirty_) refresh_low_precision_weights();
  const bool keep = options.keep_activations;
  const DType dt = precision_ == Precision::bf16 ? DType::bf16 : DType::f32;
  const bool lowp = dt == DType::bf16;
  const int64_t esz = dtype_size(dt);
  // Attention probabilities per layer: a global layer's over each feature's keys; a banded local layer's
  // blocks (O(T x window); more than the full square only for barely long sequences, whose blocks overlap),
  // or the full square too when attention dropout can make it run unbanded.
  const int64_t probs_global = packed ? kernels::varlen_probs_elems(cu.data(), B, NH) : B * NH * T * T;
  const BandPlan band(c.local_attention / 2);
  int64_t probs_local = 0;
  for (int64_t b = 0; b < B; ++b) probs_local += band.probs_elems(packed ? cu[b + 1] - cu[b] : T, NH);
  if (c.attention_probs_dropout_prob > 0.0) probs_local = std::max(probs_local, probs_global);

  // Buffers: reused while big enough (packed batches change their token count every step).
  if (!mb_ || mb_->cap_tokens < N || mb_->cap_global < probs_global || mb_->cap_local < probs_local ||
      (keep && !mb_->all_layers)) {
    // Headroom over the largest batch yet, up to the padded layout's size (with_headroom, model_ops.h).
    const int64_t pad_g = B * NH * T * T;
    const int64_t pad_l = c.attention_probs_dropout_prob > 0.0 ? std::max(B * band.probs_elems(T, NH), pad_g)
                                                               : B * band.probs_elems(T, NH);
    const int64_t cap_n = with_headroom(std::max(N, mb_ ? mb_->cap_tokens : 0), B * T);
    const int64_t cap_g = with_headroom(std::max(probs_global, mb_ ? mb_->cap_global : 0), pad_g);
    const int64_t cap_l = with_headroom(std::max(probs_local, mb_ ? mb_->cap_local : 0), pad_l);
    mb_.reset();
    auto m = std::make_shared<ModernBuffers>();
    m->cap_tokens = cap_n;
    m->cap_global = cap_g;
    m->cap_local = cap_l;
    m->all_layers = keep;
    const int64_t n = cap_n;
    auto dtbuf = [&](int64_t k) { return m->alloc<char>(k * esz); };
    m->layers.resize(keep ? L : 1);
    m->recompute_global = keep && cap_g * static_cast<int64_t>(sizeof(float)) > recompute_threshold_bytes();
    float* shared_probs = m->recompute_global ? m->alloc<float>(cap_g) : nullptr;
    for (int64_t l = 0; l < static_cast<int64_t>(m->layers.size()); ++l) {
      MbLayer& a = m->layers[l];
      const bool local = l % c.global_attn_every_n_layers != 0;
      a.mean1 = m->alloc<float>(n);
      a.rstd1 = m->alloc<float>(n);
      a.h1 = dtbuf(n * H);
      a.qkv = dtbuf(n * 3 * H);
      // Inference shares one layer's buffers among all layers: the larger need.
      if (!keep)
        a.probs = m->alloc<float>(std::max(cap_g, cap_l));
      else if (local)
        a.probs = m->alloc<float>(cap_l);
      else
        a.probs = m->recompute_global ? shared_probs : m->alloc<float>(cap_g);
      a.ctx = dtbuf(n * H);
      a.res1 = m->alloc<float>(n * H);
      a.mean2 = m->alloc<float>(n);
      a.rstd2 = m->alloc<float>(n);
      a.h2 = dtbuf(n * H);
      a.wi = m->alloc<float>(n * 2 * I);
      a.gd = dtbuf(n * I);
    }
    m->xs.resize(keep ? L + 1 : 2);
    for (float*& x : m->xs) x = m->alloc<float>(n * H);
    m->emb_sum = m->alloc<float>(n * H);
    m->emb_mean = m->alloc<float>(n);
    m->emb_rstd = m->alloc<float>(n);
    m->fmean = m->alloc<float>(n);
    m->frstd = m->alloc<float>(n);
    m->hidden_f32 = m->alloc<float>(n * H);
    if (lowp) m->hidden_bf = m->alloc<bf16>(n * H);
    m->mask = m->alloc<float>(n);
    m->ctx_block = dtbuf(n * H);
    m->tmp = m->alloc<float>(n * H);
    m->nf = m->alloc<float>(n * H);
    m->g = m->alloc<float>(n * I);
    if (lowp) m->qkv_f = m->alloc<float>(n * 3 * H);
    if (keep) {
      m->dx = m->alloc<float>(n * H);
      m->dres = m->alloc<float>(n * H);
      m->dh = m->alloc<float>(n * H);
      m->dctx = m->alloc<float>(n * H);
      m->dg = m->alloc<float>(n * I);
      m->dwi = m->alloc<float>(n * 2 * I);
      m->dqkv = m->alloc<float>(n * 3 * H);
      m->dctx_block = m->alloc<float>(n * H);
      if (lowp) {
        m->d_b = m->alloc<bf16>(n * std::max(H, I));
        m->dwi_b = m->alloc<bf16>(n * 2 * I);
        m->dqkv_b = m->alloc<bf16>(n * 3 * H);
      }
    }
    mb_ = std::move(m);
  }
  ModernBuffers& mb = *mb_;
  mb.B = B;
  mb.T = T;
  mb.N = N;
  mb.cu = std::move(cu);
  mb.opts = options;
  mb.have_forward = true;
  mb.kept = keep;
  if (mb.rope_global.max_positions < T) {
    const int64_t P = std::max<int64_t>(T, 64);
    mb.rope_global = kernels::make_rotary_table(P, c.head_dim(), c.global_rope_theta);
    mb.rope_local = kernels::make_rotary_table(P, c.head_dim(), c.local_rope_theta);
  }
  mb.ids.assign(batch.input_ids, batch.input_ids + N);
  mb.pos.resize(static_cast<size_t>(N));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t r0 = packed ? mb.cu[b] : b * T, r1 = packed ? mb.cu[b + 1] : (b + 1) * T;
    for (int64_t i = r0; i < r1; ++i) mb.pos[i] = static_cast<int32_t>(i - r0);
  }
  mb.has_mask = batch.attention_mask != nullptr;
  if (mb.has_mask)
    for (int64_t i = 0; i < N; ++i) {
      const int32_t v = batch.attention_mask[i];
      CT_CHECK(v == 0 || v == 1, "model forward: attention_mask[", i / T, ", ", i % T, "] is ", v,
               ", expected 0 or 1");
      mb.mask[i] = static_cast<float>(v);
    }
  const float* mask = mb.has_mask ? mb.mask : nullptr;

  const float* P = params_;
  const float eps = static_cast<float>(c.layer_norm_eps);
  const kernels::Activation act = kernels::activation_from_name(c.hidden_act);
  auto site = [&](double p, uint64_t id, int64_t width) {
    kernels::DropoutSite s = dropout_site(options, p, id, T);
    if (s.row_streams && id % 3 != 1) s.row_elems = T * width;
    return s;
  };
  auto acts = [&](int64_t l) -> MbLayer& { return mb.layers[keep ? l : 0]; };
  auto X = [&](int64_t l) { return mb.xs[keep ? l : l % 2]; };
  auto as_bf = [&](char* p) { return lowp ? reinterpret_cast<bf16*>(p) : nullptr; };

  // Embeddings: token rows -> norm -> dropout.
  for (int64_t i = 0; i < N; ++i)
    std::memcpy(mb.emb_sum + i * H, P + layout_.word_emb + static_cast<int64_t>(mb.ids[i]) * H,
                static_cast<size_t>(H) * sizeof(float));
  kernels::layernorm_forward(X(0), nullptr, mb.emb_mean, mb.emb_rstd, mb.emb_sum, P + layout_.emb_ln_w,
                             nullptr, N, H, eps);
  apply_dropout_rows(X(0), nullptr, X(0), N, H, T, mb.cu, site(c.hidden_dropout_prob, 0, H));

  for (int64_t l = 0; l < L; ++l) {
    const LayerOffsets& lo = layout_.layers[l];
    MbLayer& a = acts(l);
    float* x = X(l);
    const uint64_t sid = 1 + 3 * static_cast<uint64_t>(l);
    const bool local = l % c.global_attn_every_n_layers != 0;
    // attn_norm (the identity on layer 0).
    const void* h1 = a.h1;
    if (lo.ln1_w < 0) {
      if (lowp)
        to_bf16(as_bf(a.h1), x, N * H);
      else
        h1 = x;
    } else {
      kernels::layernorm_forward(lowp ? mb.nf : reinterpret_cast<float*>(a.h1), as_bf(a.h1), a.mean1, a.rstd1,
                                 x, P + lo.ln1_w, nullptr, N, H, eps);
    }
    // Fused q|k|v, then q and k rotated in f32.
    float* qkv_f = lowp ? mb.qkv_f : reinterpret_cast<float*>(a.qkv);
    kernels::linear_forward(qkv_f, DType::f32, h1, weight(lo.qkv_w), nullptr, N, H, 3 * H, dt);
    const kernels::RotaryTable& rope = local ? mb.rope_local : mb.rope_global;
    kernels::rotary_forward(qkv_f, mb.pos.data(), N, NH, 3 * H, rope);
    kernels::rotary_forward(qkv_f + H, mb.pos.data(), N, NH, 3 * H, rope);
    if (lowp) to_bf16(as_bf(a.qkv), qkv_f, N * 3 * H);
    kernels::AttentionDims dims;
    dims.B = B;
    dims.T = T;
    dims.NH = NH;
    dims.HS = c.head_dim();
    dims.ld_qkv = 3 * H;
    dims.window = local ? c.local_attention / 2 : 0;
    const kernels::DropoutSite attn_site = site(c.attention_probs_dropout_prob, sid, H);
    if (!local) mb.probs_layer = l;
    if (local && attn_site.p == 0.0f)
      band_forward(a.ctx, a.probs, a.qkv, mb.ctx_block, sequences(B, T, mb.cu, mask), dims, dt);
    else if (packed)
      kernels::attention_forward_varlen(a.ctx, a.probs, a.qkv, a.qkv + H * esz, a.qkv + 2 * H * esz,
                                        mb.cu.data(), dims, dt, attn_site);
    else
      kernels::attention_forward(a.ctx, a.probs, a.qkv, a.qkv + H * esz, a.qkv + 2 * H * esz, mask, dims, dt,
                                 attn_site);
    kernels::linear_forward(mb.tmp, DType::f32, a.ctx, weight(lo.attn_out_w), nullptr, N, H, H, dt);
    apply_dropout_rows(mb.tmp, nullptr, mb.tmp, N, H, T, mb.cu,
                       site(c.attention_probs_dropout_prob, sid + 1, H));
    add_into(a.res1, mb.tmp, x, N * H);
    // mlp_norm -> Wi -> GeGLU -> dropout -> Wo, plus the residual.
    kernels::layernorm_forward(lowp ? mb.nf : reinterpret_cast<float*>(a.h2), as_bf(a.h2), a.mean2, a.rstd2,
                               a.res1, P + lo.ln2_w, nullptr, N, H, eps);
    kernels::linear_forward(a.wi, DType::f32, a.h2, weight(lo.ffn_in_w), nullptr, N, H, 2 * I, dt);
    float* g = lowp ? mb.g : reinterpret_cast<float*>(a.gd);
    kernels::geglu_forward(g, a.wi, N, I, act);
    apply_dropout_rows(g, as_bf(a.gd), g, N, I, T, mb.cu, site(c.mlp_dropout, sid + 2, I));
    kernels::linear_forward(mb.tmp, DType::f32, a.gd, weight(lo.ffn_out_w), nullptr, N, I, H, dt);
    add_into(X(l + 1), mb.tmp, a.res1, N * H);
  }
  kernels::layernorm_forward(mb.hidden_f32, mb.hidden_bf, mb.fmean, mb.frstd, X(L), P + layout_.final_norm_w,
                             nullptr, N, H, eps);

  HeadPass pass;
  pass.config = &config_;
  pass.layout = &layout_;
  pass.dt = dt;
  pass.B = B;
  pass.T = T;
  pass.N = N;
  pass.H = H;
  pass.cu = &mb.cu;
  pass.P = params_;
  pass.G = grads_;
  pass.weight = [this](int64_t offset) { return weight(offset); };
  const uint64_t first = 1 + 3 * static_cast<uint64_t>(L);
  pass.site = [this, options, first, T](double p, uint64_t k, int64_t row_elems) {
    kernels::DropoutSite s = dropout_site(options, p, first + k, T);
    if (s.row_streams) s.row_elems = row_elems;
    return s;
  };
  const void* hidden = lowp ? static_cast<const void*>(mb.hidden_bf) : mb.hidden_f32;
  return head_->forward(pass, batch, hidden, mb.hidden_f32);
}

void EncoderModel::backward_modernbert(const GradReadyFn& on_ready, float loss_scale, bool accumulate) {
  CT_CHECK(mb_ && mb_->have_forward, "model backward: no forward pass to differentiate");
  CT_CHECK(mb_->kept, "model backward: the last forward ran with keep_activations off (inference)");
  CT_CHECK(head_->has_loss(), "model backward: the last forward had no labels, so there is no loss");
  ModernBuffers& mb = *mb_;
  const ModelConfig& c = config_;
  const DType dt = precision_ == Precision::bf16 ? DType::bf16 : DType::f32;
  const bool lowp = dt == DType::bf16;
  const int64_t esz = dtype_size(dt);
  const int64_t B = mb.B, T = mb.T, N = mb.N, H = c.hidden_size, I = c.intermediate_size;
  const int64_t NH = c.num_attention_heads, L = c.num_hidden_layers;
  const bool packed = !mb.cu.empty();
  const kernels::Activation act = kernels::activation_from_name(c.hidden_act);
  const StepOptions& options = mb.opts;
  auto site = [&](double p, uint64_t id, int64_t width) {
    kernels::DropoutSite s = dropout_site(options, p, id, T);
    if (s.row_streams && id % 3 != 1) s.row_elems = T * width;
    return s;
  };
  const float* P = params_;
  float* G = grads_;
  // Norm weights and biases are only ever added to; linear weights are overwritten by their gemm unless
  // accumulating.
  auto prepare = [&](int64_t off, int64_t n) {
    if (!accumulate && off >= 0) zero_f32(G + off, n);
  };
  auto report = [&](int64_t begin, int64_t end) {
    if (!on_ready) return;
    for (int64_t i = static_cast<int64_t>(layout_.params.size()) - 1; i >= 0; --i) {
      const ParamInfo& p = layout_.params[i];
      if (p.offset >= begin && p.offset < end) on_ready(p.offset, p.numel());
    }
  };
  // A gradient as a matmul operand: its bf16 copy (written here) in bf16 mode.
  auto mm = [&](const float* f, bf16* b, int64_t n) -> const void* {
    if (!lowp) return f;
    to_bf16(b, f, n);
    return b;
  };

  // The head: its parameters, and d hidden into dx. A tied decoder adds into the token embeddings' gradient.
  const bool tied = layout_.head_kind == HeadKind::masked_lm;
  prepare(layout_.head.begin, layout_.head.end - layout_.head.begin);
  if (tied) prepare(layout_.word_emb, c.vocab_size * H);
  HeadPass pass;
  pass.config = &config_;
  pass.layout = &layout_;
  pass.dt = dt;
  pass.B = B;
  pass.T = T;
  pass.N = N;
  pass.H = H;
  pass.cu = &mb.cu;
  pass.P = params_;
  pass.G = grads_;
  pass.weight = [this](int64_t offset) { return weight(offset); };
  const uint64_t first = 1 + 3 * static_cast<uint64_t>(L);
  pass.site = [this, options, first, T](double p, uint64_t k, int64_t row_elems) {
    kernels::DropoutSite s = dropout_site(options, p, first + k, T);
    if (s.row_streams) s.row_elems = row_elems;
    return s;
  };
  pass.accumulate = accumulate;
  pass.loss_scale = loss_scale;
  head_->backward(pass, mb.dh);
  report(layout_.head.begin, layout_.head.end);

  // final_norm: dx = d X(L).
  prepare(layout_.final_norm_w, H);
  kernels::layernorm_backward(mb.dx, G + layout_.final_norm_w, nullptr, mb.dh, mb.xs[L],
                              P + layout_.final_norm_w, mb.fmean, mb.frstd, N, H, /*accumulate_dinp=*/false);
  report(layout_.final_norm_w, layout_.head.begin);

  for (int64_t l = L - 1; l >= 0; --l) {
    const LayerOffsets& lo = layout_.layers[l];
    const MbLayer& a = mb.layers[l];
    const float* x = mb.xs[l];
    const uint64_t sid = 1 + 3 * static_cast<uint64_t>(l);
    const bool local = l % c.global_attn_every_n_layers != 0;
    prepare(lo.ln1_w, H);
    prepare(lo.ln2_w, H);

    // MLP: X(l+1) = res1 + Wo(gd).
    const void* dx_mm = mm(mb.dx, mb.d_b, N * H);
    linear_backward_input(mb.dg, dx_mm, weight(lo.ffn_out_w), N, I, H, dt);
    linear_backward_params(G + lo.ffn_out_w, nullptr, mb.dx, dx_mm, a.gd, N, I, H, dt, accumulate);
    apply_dropout_rows(mb.dg, nullptr, mb.dg, N, I, T, mb.cu, site(c.mlp_dropout, sid + 2, I));
    kernels::geglu_backward(mb.dwi, mb.dg, a.wi, N, I, act);
    const void* dwi_mm = mm(mb.dwi, mb.dwi_b, N * 2 * I);
    linear_backward_input(mb.dh, dwi_mm, weight(lo.ffn_in_w), N, H, 2 * I, dt);
    linear_backward_params(G + lo.ffn_in_w, nullptr, mb.dwi, dwi_mm, a.h2, N, H, 2 * I, dt, accumulate);
    // mlp_norm: d res1 = dx + its backward.
    copy_f32(mb.dres, mb.dx, N * H);
    kernels::layernorm_backward(mb.dres, G + lo.ln2_w, nullptr, mb.dh, a.res1, P + lo.ln2_w, a.mean2, a.rstd2,
                                N, H);
    // Attention: res1 = x + drop(Wo ctx).
    copy_f32(mb.dx, mb.dres, N * H);
    apply_dropout_rows(mb.dres, nullptr, mb.dres, N, H, T, mb.cu,
                       site(c.attention_probs_dropout_prob, sid + 1, H));
    const void* dres_mm = mm(mb.dres, mb.d_b, N * H);
    linear_backward_input(mb.dctx, dres_mm, weight(lo.attn_out_w), N, H, H, dt);
    linear_backward_params(G + lo.attn_out_w, nullptr, mb.dres, dres_mm, a.ctx, N, H, H, dt, accumulate);
    zero_f32(mb.dqkv, N * 3 * H);
    kernels::AttentionDims dims;
    dims.B = B;
    dims.T = T;
    dims.NH = NH;
    dims.HS = c.head_dim();
    dims.ld_qkv = 3 * H;
    dims.window = local ? c.local_attention / 2 : 0;
    const kernels::DropoutSite attn_site = site(c.attention_probs_dropout_prob, sid, H);
    if (!local && mb.recompute_global && mb.probs_layer != l) {  // the shared buffer holds another layer's
      if (packed)
        kernels::attention_forward_varlen(mb.ctx_block, a.probs, a.qkv, a.qkv + H * esz, a.qkv + 2 * H * esz,
                                          mb.cu.data(), dims, dt, attn_site);
      else
        kernels::attention_forward(mb.ctx_block, a.probs, a.qkv, a.qkv + H * esz, a.qkv + 2 * H * esz,
                                   mb.has_mask ? mb.mask : nullptr, dims, dt, attn_site);
      mb.probs_layer = l;
    }
    if (local && attn_site.p == 0.0f)
      band_backward(mb.dqkv, mb.dctx, a.qkv, a.probs, mb.dctx_block,
                    sequences(B, T, mb.cu, mb.has_mask ? mb.mask : nullptr), dims, dt);
    else if (packed)
      kernels::attention_backward_varlen(mb.dqkv, mb.dqkv + H, mb.dqkv + 2 * H, mb.dctx, a.qkv,
                                         a.qkv + H * esz, a.qkv + 2 * H * esz, a.probs, mb.cu.data(), dims,
                                         dt, attn_site);
    else
      kernels::attention_backward(mb.dqkv, mb.dqkv + H, mb.dqkv + 2 * H, mb.dctx, a.qkv, a.qkv + H * esz,
                                  a.qkv + 2 * H * esz, a.probs, mb.has_mask ? mb.mask : nullptr, dims, dt,
                                  attn_site);
    const kernels::RotaryTable& rope = local ? mb.rope_local : mb.rope_global;
    kernels::rotary_backward(mb.dqkv, mb.pos.data(), N, NH, 3 * H, rope);
    kernels::rotary_backward(mb.dqkv + H, mb.pos.data(), N, NH, 3 * H, rope);
    const void* dqkv_mm = mm(mb.dqkv, mb.dqkv_b, N * 3 * H);
    const void* h1 = (lo.ln1_w < 0 && !lowp) ? static_cast<const void*>(x) : a.h1;
    linear_backward_input(mb.dh, dqkv_mm, weight(lo.qkv_w), N, H, 3 * H, dt);
    linear_backward_params(G + lo.qkv_w, nullptr, mb.dqkv, dqkv_mm, h1, N, H, 3 * H, dt, accumulate);
    // attn_norm (identity on layer 0): dx += its backward.
    if (lo.ln1_w < 0)
      add_into(mb.dx, mb.dx, mb.dh, N * H);
    else
      kernels::layernorm_backward(mb.dx, G + lo.ln1_w, nullptr, mb.dh, x, P + lo.ln1_w, a.mean1, a.rstd1, N,
                                  H);
    report(lo.begin, lo.end);
  }

  // Embeddings: dropout, norm, then the lookup's scatter (nn.Embedding(padding_idx) skips the pad rows; a
  // tied decoder's gradient, already in the table, stays).
  apply_dropout_rows(mb.dx, nullptr, mb.dx, N, H, T, mb.cu, site(c.hidden_dropout_prob, 0, H));
  prepare(layout_.emb_ln_w, H);
  if (!tied && !accumulate) zero_word_grad();
  kernels::layernorm_backward(mb.dres, G + layout_.emb_ln_w, nullptr, mb.dx, mb.emb_sum, P + layout_.emb_ln_w,
                              mb.emb_mean, mb.emb_rstd, N, H, /*accumulate_dinp=*/false);
  float* gw = G + layout_.word_emb;
  for (int64_t i = 0; i < N; ++i) {
    if (mb.ids[i] == c.pad_token_id) continue;
    float* row = gw + static_cast<int64_t>(mb.ids[i]) * H;
    const float* d = mb.dres + i * H;
    for (int64_t k = 0; k < H; ++k) row[k] += d[k];
  }
  note_word_grad(mb.ids.data(), N);
  report(layout_.emb_begin, layout_.emb_end);
}

}  // namespace ct::model

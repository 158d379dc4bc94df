// DeBERTa-v2/v3's body as transformers' modeling_deberta_v2.py computes it, on EncoderModel's slab and with
// its heads: embeddings (word, absolute positions only with position_biased_input, token types only with
// type_vocab_size > 0, the bias-free embed_proj when embedding_size differs) -> LayerNorm -> times the
// attention mask -> dropout; the relative embeddings (LayerNorm'ed once per forward when norm_rel_ebd says
// so, dropped out per layer as pos_dropout does); post-LN layers whose self-attention adds the disentangled
// content-to-position and position-to-content terms (kernels/disentangled_attention.h) to the content scores,
// all scaled by 1 / sqrt(head_dim * (1 + number of position terms)), and XSoftmax (masked keys get 0, and a
// padded query row is all 0, not uniform).
//
// Why a body of its own rather than branches in encoder_model.cpp: the attention is not the fused kernel's
// (a bias between the scores and the softmax, a [R, H] projection per layer) and the embeddings differ in
// order (projection before the LayerNorm, a mask multiply); what is shared (layout, heads, dropout sites,
// bf16 weight copies) comes through EncoderModel's members.
//
// The position terms: per sequence and head, C2P = Q Kr^T and P2C = K Qr^T over the band of relative rows the
// sequence's distances reach (min(2 L - 1, 2 span) rows, not all 2 span), laid so that the kernels index them
// by absolute row (query i's band starts at i * W + lo); nothing [B, heads, T, 2 span] is built.
// Activations are kept in f32 with bf16 copies of what bf16 matmuls read (more memory than the BERT body's
// bf16 buffers; simpler to keep exact); inference (keep_activations off) holds one layer's. Dropout counters
// follow the BERT body's sites, attention probabilities counted in the padded layout, so a packed batch drops
// what the padded one would.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "core/error.h"
#include "kernels/activation.h"
#include "kernels/disentangled_attention.h"
#include "kernels/dropout.h"
#include "kernels/embedding.h"
#include "kernels/gemm.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "kernels/philox_lanes.h"
#include "kernels/relative_position.h"
#include "kernels/vec_math.h"
#include "model/encoder_model.h"
#include "model/head.h"
#include "model/model_ops.h"

namespace ct::model {

namespace {

// An activation in f32 and, in bf16 mode, the bf16 copy a matmul reads.
struct Act {
  std::vector<float> f;
  std::vector<bf16> b;
  void resize(int64_t n, bool lowp) {
    f.resize(static_cast<size_t>(n));
    if (lowp) b.resize(static_cast<size_t>(n));
  }
  void sync(bool lowp) {
    if (lowp) to_bf16(b.data(), f.data(), static_cast<int64_t>(f.size()));
  }
  // The matmul operand, `offset` elements in.
  const void* mm(bool lowp, int64_t offset = 0) const {
    return lowp ? static_cast<const void*>(b.data() + offset) : static_cast<const void*>(f.data() + offset);
  }
};

struct Operand {
  const void* p;
  int64_t ld;
  bool trans;
};

// One row of dropped probabilities for the P V product (and V's gradient): y = dropout(x) in f32, or only its
// bf16 copy yb in bf16 mode. Called inside the per-head parallel loops, so it opens no parallel region of its
// own; with rs.p == 0 it only converts (yb) or copies (y).
void dropped_row(float* y, bf16* yb, const float* x, int64_t len, const kernels::DropoutSite& rs) {
  if (rs.p == 0.0f) {
    if (yb) {
#pragma omp simd
      for (int64_t j = 0; j < len; ++j) yb[j] = ct::to_bf16(x[j]);
    } else {
      std::memcpy(y, x, sizeof(float) * static_cast<size_t>(len));
    }
    return;
  }
  kernels::for_each_dropout(rs.seed, rs.stream, rs.offset, rs.p, 0, len, [&](int64_t j, float keep) {
    if (yb) {
      yb[j] = ct::to_bf16(x[j] * keep);
    } else {
      y[j] = x[j] * keep;
    }
  });
}

inline bool nonzero(float x) {
  return x != 0.0f;
}
inline bool nonzero(bf16 x) {
  return (x.bits & 0x7fffu) != 0;
}

// One row of the scores' gradient in place: g = P * (dPd * keep - sum(dPd * keep * P)), keep = scale where
// the dropped probability y is nonzero, else 0 (y == null: no dropout); gb, when given, gets its bf16 copy.
template <class TY>
void softmax_backward_row(float* g, bf16* gb, const float* p, const TY* y, int64_t len, float scale) {
  float dot = 0.0f;
  if (y) {
#pragma omp simd
    for (int64_t j = 0; j < len; ++j) g[j] = nonzero(y[j]) ? g[j] * scale : 0.0f;
  }
#pragma omp simd reduction(+ : dot)
  for (int64_t j = 0; j < len; ++j) dot += g[j] * p[j];
  if (gb) {
#pragma omp simd
    for (int64_t j = 0; j < len; ++j) {
      g[j] = p[j] * (g[j] - dot);
      gb[j] = ct::to_bf16(g[j]);
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < len; ++j) g[j] = p[j] * (g[j] - dot);
  }
}

// Attention dropout with the padded layout's counters: probs[b, h, i, j] at ((b NH + h) T + i) T + j, or at
// (h T + i) T + j of sequence b's own stream when the site has row streams.
kernels::DropoutSite attn_row_site(const kernels::DropoutSite& site, int64_t b, int64_t h, int64_t i,
                                   int64_t NH, int64_t T) {
  kernels::DropoutSite rs = site;
  if (rs.row_streams) {
    rs.stream = rs.row_streams[b];
    rs.row_streams = nullptr;
    rs.row_elems = 0;
    rs.offset += static_cast<uint64_t>((h * T + i) * T);
  } else {
    rs.offset += static_cast<uint64_t>(((b * NH + h) * T + i) * T);
  }
  return rs;
}

// C (+)= alpha * op(A) op(B) for one head on the calling thread (inside a per-head task), the exact shape: a
// run has few sequence lengths.
void head_mm(int64_t M, int64_t N, int64_t K, const Operand& a, const Operand& b, float* c, int64_t ldc,
             DType dt, float alpha, bool accumulate = false) {
  kernels::Gemm g;
  g.M = M;
  g.N = N;
  g.K = K;
  g.trans_a = a.trans;
  g.trans_b = b.trans;
  g.lda = a.ld;
  g.ldb = b.ld;
  g.ldc = ldc;
  g.a_type = g.b_type = dt;
  g.alpha = alpha;
  g.accumulate = accumulate;
  g.quantize_shape = false;
  kernels::gemm(g, a.p, b.p, c);
}

// A task's own scratch: its head's position terms (forward) or their gradients (backward), dropped
// probabilities and score gradients, and their bf16 copies.
thread_local std::vector<float> t_c2p, t_p2c, t_pd, t_ds;
thread_local std::vector<bf16> t_pd_b, t_ds_b, t_c2p_b, t_p2c_b;

template <class V>
typename V::value_type* grown(V& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

}  // namespace

struct EncoderModel::DebertaState {
  struct Layer {
    Act x;       // [N, H] layer input
    Act qkv;     // [N, 3H]
    Act relp;    // [R, H] the relative embeddings after this layer's pos_dropout (empty when p = 0)
    Act kr, qr;  // [R, H] relative embeddings through the key (c2p) / query (p2c) projections
    std::vector<float> probs;  // per sequence [NH, L, L], XSoftmax output before dropout
    // Training: the dropped probabilities P V read (bf16, or f32 with dropout), laid out as probs, so that
    // backward reads them (and their keep mask) instead of drawing every Philox word again. Empty otherwise.
    std::vector<float> pd;
    std::vector<bf16> pd_b;
    Act ctx;  // [N, H]
    std::vector<float> res1, mean1, rstd1;
    Act h1;
    std::vector<float> inter;  // [N, I] pre-activation
    Act act;
    std::vector<float> res2, mean2, rstd2;
  };
  int64_t B = 0, T = 0, N = 0;
  std::vector<int64_t> cu;       // packed: sequence b is rows [cu[b], cu[b + 1]); empty padded
  std::vector<int64_t> row_pos;  // packed: token row r's row in the padded layout (its dropout counters)
  bool have_forward = false;
  bool kept = false;  // the last forward kept every layer's activations
  StepOptions opts;
  std::vector<int32_t> ids, type_ids, pos_ids;
  std::vector<float> mask;  // [N] 0/1; empty: every token attends
  // By sequence length: the relative-embedding row each diagonal reads (built once per forward, used by
  // every layer's forward and backward).
  std::map<int64_t, kernels::DisentangledPlan> plans;
  std::vector<int64_t> probs_off;  // [B]: where sequence b's probabilities start
  Act emb_sum;                     // [N, E] word + position + type
  std::vector<float> emb_pre;      // [N, H] embed_proj's output (the LayerNorm input), when projecting
  std::vector<float> emb_mean, emb_rstd;
  Act rel;  // [R, H] relative embeddings after their LayerNorm
  std::vector<float> rel_mean, rel_rstd;
  std::vector<Layer> layers;  // L + 1 (entry L holds only x, the final hidden state); 2 in inference
  // Scratch.
  std::vector<float> dres, dx, dctx, dinter, dact, dqkv, dkr, dqr, drel, drel_total, demb;
  std::vector<float> dkr_seq, dqr_seq;  // [B, R, H]: each sequence's share of dkr / dqr (its band's rows)
  std::vector<bf16> dres_b, dinter_b, dqkv_b, dctx_b, dkr_b, dqr_b;

  int64_t rows(int64_t b) const { return cu.empty() ? T : cu[b + 1] - cu[b]; }
  int64_t row0(int64_t b) const { return cu.empty() ? b * T : cu[b]; }
};

void EncoderModel::deberta_pass_shape(HeadPass& pass) const {
  pass.B = deberta_->B;
  pass.T = deberta_->T;
  pass.N = deberta_->N;
  pass.cu = &deberta_->cu;
}

int64_t EncoderModel::deberta_bytes() const {
  if (!deberta_) return 0;
  const DebertaState& s = *deberta_;
  int64_t bytes = 0;
  auto add = [&](const auto& v) { bytes += static_cast<int64_t>(v.capacity() * sizeof(v[0])); };
  auto act = [&](const Act& a) {
    add(a.f);
    add(a.b);
  };
  for (const auto& l : s.layers) {
    for (const Act* a : {&l.x, &l.qkv, &l.relp, &l.kr, &l.qr, &l.ctx, &l.h1, &l.act}) act(*a);
    for (const auto* v :
         {&l.probs, &l.pd, &l.res1, &l.mean1, &l.rstd1, &l.inter, &l.res2, &l.mean2, &l.rstd2})
      add(*v);
    add(l.pd_b);
  }
  for (const auto* v : {&s.dres, &s.dx, &s.dctx, &s.dinter, &s.dact, &s.dqkv, &s.dkr, &s.dqr, &s.dkr_seq,
                        &s.dqr_seq, &s.drel, &s.drel_total, &s.demb, &s.emb_pre})
    add(*v);
  act(s.emb_sum);
  act(s.rel);
  return bytes;
}

namespace {

constexpr float kLowest = -std::numeric_limits<float>::max();

}  // namespace

float EncoderModel::deberta_forward(const Batch& batch, const StepOptions& options, std::vector<int64_t> cu) {
  if (!deberta_) deberta_ = std::make_shared<DebertaState>();
  DebertaState& s = *deberta_;
  const ModelConfig& c = config_;
  const int64_t B = batch.B, T = batch.T, H = c.hidden_size, I = c.intermediate_size;
  const int64_t E = c.embedding_width(), NH = c.num_attention_heads, D = H / NH, L = c.num_hidden_layers;
  const DType dt = precision_ == Precision::bf16 ? DType::bf16 : DType::f32;
  const bool lowp = dt == DType::bf16;
  const float eps = static_cast<float>(c.layer_norm_eps);
  const kernels::Activation act = kernels::activation_from_name(c.hidden_act);
  const float* P = params_;
  s.B = B;
  s.T = T;
  s.cu = std::move(cu);
  const bool packed = !s.cu.empty();
  padded_row_positions(s.row_pos, s.cu, T);
  const int64_t* row_pos = packed ? s.row_pos.data() : nullptr;
  const int64_t N = packed ? s.cu[B] : B * T;
  s.N = N;
  s.opts = options;
  s.have_forward = true;
  // Embedding dropout (site 0) acts on H-wide rows here, after embed_proj, not E-wide ones as in ELECTRA.
  auto site = [&](double p, uint64_t id) {
    kernels::DropoutSite st = dropout_site(options, p, id, T);
    if (id == 0 && st.row_streams) st.row_elems = T * H;
    return st;
  };
  const double p_hidden = c.hidden_dropout_prob, p_attn = c.attention_probs_dropout_prob;

  // Inputs (the packed path checked its ids already; padded ones are checked here, by [row, position]).
  s.ids.assign(batch.input_ids, batch.input_ids + N);
  const bool types = c.type_vocab_size > 0;
  if (types && batch.token_type_ids)
    s.type_ids.assign(batch.token_type_ids, batch.token_type_ids + N);
  else
    s.type_ids.assign(static_cast<size_t>(N), 0);
  for (int64_t i = 0; i < N && !packed; ++i) {
    CT_CHECK(s.ids[i] >= 0 && s.ids[i] < c.vocab_size, "model forward: input_ids[", i / T, ", ", i % T,
             "] = ", s.ids[i], " outside the vocabulary [0, ", c.vocab_size, ")");
    CT_CHECK(!types || (s.type_ids[i] >= 0 && s.type_ids[i] < c.type_vocab_size),
             "model forward: token_type_ids[", i / T, ", ", i % T, "] = ", s.type_ids[i], " outside [0, ",
             c.type_vocab_size, ")");
  }
  s.mask.clear();
  if (batch.attention_mask) {
    s.mask.resize(static_cast<size_t>(N));
    for (int64_t i = 0; i < N; ++i) {
      const int32_t m = batch.attention_mask[i];
      CT_CHECK(m == 0 || m == 1, "model forward: attention_mask[", i / T, ", ", i % T, "] is ", m,
               ", expected 0 or 1");
      s.mask[i] = static_cast<float>(m);
    }
  }
  s.pos_ids.resize(static_cast<size_t>(N));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < s.rows(b); ++t) s.pos_ids[s.row0(b) + t] = static_cast<int32_t>(t);

  // Embeddings: sum, [embed_proj], LayerNorm, mask, dropout.
  s.emb_sum.resize(N * E, lowp && c.projects_embeddings());
  {
    const float* wte = P + layout_.word_emb;
    const float* wpe = layout_.pos_emb >= 0 ? P + layout_.pos_emb : nullptr;
    const float* tte = layout_.type_emb >= 0 ? P + layout_.type_emb : nullptr;
#pragma omp parallel for schedule(static) if (N * E > 16384)
    for (int64_t i = 0; i < N; ++i) {
      float* o = s.emb_sum.f.data() + i * E;
      const float* w = wte + static_cast<int64_t>(s.ids[i]) * E;
      for (int64_t e = 0; e < E; ++e) o[e] = w[e];
      if (wpe)
        for (int64_t e = 0, p = s.pos_ids[i]; e < E; ++e) o[e] += wpe[p * E + e];
      if (tte)
        for (int64_t e = 0, t = s.type_ids[i]; e < E; ++e) o[e] += tte[t * E + e];
    }
  }
  // Inference (keep_activations off): one layer's activations, the hidden state alternating between two
  // slots.
  const bool keep = options.keep_activations;
  s.kept = keep;
  s.layers.resize(static_cast<size_t>(keep ? L + 1 : 2));
  for (auto& l : s.layers) l.x.resize(N * H, lowp);
  const float* ln_in = s.emb_sum.f.data();
  if (c.projects_embeddings()) {
    s.emb_sum.sync(lowp);
    s.emb_pre.resize(static_cast<size_t>(N * H));
    kernels::linear_forward(s.emb_pre.data(), DType::f32, s.emb_sum.mm(lowp), weight(layout_.emb_proj_w),
                            nullptr, N, E, H, dt);
    ln_in = s.emb_pre.data();
  }
  s.emb_mean.resize(static_cast<size_t>(N));
  s.emb_rstd.resize(static_cast<size_t>(N));
  Act& x0 = s.layers[0].x;
  kernels::layernorm_forward(x0.f.data(), nullptr, s.emb_mean.data(), s.emb_rstd.data(), ln_in,
                             P + layout_.emb_ln_w, P + layout_.emb_ln_b, N, H, eps);
  if (!s.mask.empty())
    for (int64_t i = 0; i < N; ++i)
      if (s.mask[i] == 0.0f) std::fill(x0.f.data() + i * H, x0.f.data() + (i + 1) * H, 0.0f);
  apply_dropout_rows(x0.f.data(), lowp ? x0.b.data() : nullptr, x0.f.data(), N, H, T, s.cu,
                     site(p_hidden, 0));

  // Relative embeddings and the bucket of every distance.
  const bool rel = c.relative_attention, c2p = c.has_c2p(), p2c = c.has_p2c();
  const int32_t span = static_cast<int32_t>(c.relative_span());
  const int64_t R = rel ? 2 * static_cast<int64_t>(span) : 0;
  const int64_t max_rel = c.max_relative_positions < 1 ? c.max_position_embeddings : c.max_relative_positions;
  if (rel) {
    s.rel.f.assign(P + layout_.rel_emb, P + layout_.rel_emb + R * H);
    if (c.norm_rel_ebd) {
      s.rel_mean.resize(static_cast<size_t>(R));
      s.rel_rstd.resize(static_cast<size_t>(R));
      kernels::layernorm_forward(s.rel.f.data(), nullptr, s.rel_mean.data(), s.rel_rstd.data(),
                                 P + layout_.rel_emb, P + layout_.rel_ln_w, P + layout_.rel_ln_b, R, H, eps);
    }
    if (lowp) {
      s.rel.b.resize(s.rel.f.size());
      s.rel.sync(true);
    }
    s.plans.clear();
    if (c2p || p2c) {
      const std::vector<int32_t> buckets = kernels::relative_position_buckets(T, c.position_buckets, max_rel);
      for (int64_t b = 0; b < B; ++b)
        if (!s.plans.count(s.rows(b)))
          s.plans.emplace(s.rows(b),
                          kernels::disentangled_plan(buckets.data() + (T - s.rows(b)), s.rows(b), span));
    }
  }
  const float inv_scale = 1.0f / std::sqrt(static_cast<float>(D) * static_cast<float>(1 + c2p + p2c));

  s.probs_off.resize(static_cast<size_t>(B));
  int64_t probs_elems = 0;
  for (int64_t b = 0; b < B; ++b) {
    s.probs_off[b] = probs_elems;
    probs_elems += NH * s.rows(b) * s.rows(b);
  }
  s.dres.resize(static_cast<size_t>(N * H));

  for (int64_t l = 0; l < L; ++l) {
    const LayerOffsets& lo = layout_.layers[l];
    DebertaState::Layer& a = s.layers[keep ? l : 0];
    Act& x = s.layers[keep ? l : l % 2].x;
    Act& next = s.layers[keep ? l + 1 : (l + 1) % 2].x;
    const uint64_t sid = 1 + 3 * static_cast<uint64_t>(l);
    a.qkv.resize(N * 3 * H, lowp);
    kernels::linear_forward(a.qkv.f.data(), DType::f32, x.mm(lowp), weight(lo.qkv_w), P + lo.qkv_b, N, H,
                            3 * H, dt);
    a.qkv.sync(lowp);

    // This layer's relative keys / queries: the shared relative embeddings through pos_dropout and the key /
    // query projections (share_att_key) or their own.
    if (rel && (c2p || p2c)) {
      kernels::DropoutSite pos_site = dropout_site(options, p_hidden, (uint64_t{1} << 22) + l, T);
      pos_site.row_streams = nullptr;  // one mask over the table, shared by the batch (HF: one per layer)
      const Act* relp = &s.rel;
      if (pos_site.p > 0.0f) {
        a.relp.resize(R * H, lowp);
        apply_dropout(a.relp.f.data(), lowp ? a.relp.b.data() : nullptr, s.rel.f.data(), R * H, pos_site);
        relp = &a.relp;
      } else {
        a.relp.f.clear();
      }
      if (c2p) {
        a.kr.resize(R * H, lowp);
        const int64_t w = c.share_att_key ? lo.qkv_w + H * H : lo.pos_key_w;
        const int64_t bias = c.share_att_key ? lo.qkv_b + H : lo.pos_key_b;
        kernels::linear_forward(a.kr.f.data(), DType::f32, relp->mm(lowp), weight(w), P + bias, R, H, H, dt);
        a.kr.sync(lowp);
      }
      if (p2c) {
        a.qr.resize(R * H, lowp);
        const int64_t w = c.share_att_key ? lo.qkv_w : lo.pos_query_w;
        const int64_t bias = c.share_att_key ? lo.qkv_b : lo.pos_query_b;
        kernels::linear_forward(a.qr.f.data(), DType::f32, relp->mm(lowp), weight(w), P + bias, R, H, H, dt);
        a.qr.sync(lowp);
      }
    }

    a.probs.resize(static_cast<size_t>(probs_elems));
    a.ctx.resize(N * H, lowp);
    const kernels::DropoutSite attn_site = site(p_attn, sid);
    // Kept for backward (training): bf16, or f32 with dropout (without, P V reads the probabilities).
    a.pd.resize(keep && !lowp && attn_site.p > 0.0f ? static_cast<size_t>(probs_elems) : 0);
    a.pd_b.resize(keep && lowp ? static_cast<size_t>(probs_elems) : 0);
    // One task per (sequence, head), its products on its own thread: the head's scores, position terms and
    // probabilities stay in its core's caches from the first product to the last (per-sequence passes over
    // [heads, L, L] went through memory between phases), and a batch gives B x heads tasks, not twelve.
    const bool drop = attn_site.p > 0.0f, pos = rel && (c2p || p2c);
#pragma omp parallel for collapse(2) schedule(dynamic, 1)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < NH; ++h) {
        const int64_t r0 = s.row0(b), len = s.rows(b);
        const int64_t q_off = r0 * 3 * H + h * D;
        float* Sh = a.probs.data() + s.probs_off[b] + h * len * len;
        head_mm(len, len, D, {a.qkv.mm(lowp, q_off), 3 * H, false}, {a.qkv.mm(lowp, q_off + H), 3 * H, true},
                Sh, len, dt, inv_scale);
        if (pos) {
          const kernels::DisentangledPlan& plan = s.plans.at(len);
          const int64_t lo_row = plan.lo, W = plan.hi - plan.lo + 1, ldp = len * W + lo_row;
          // The position terms over the band of rows this length reaches, indexed by absolute row.
          float* c2p_h = c2p ? grown(t_c2p, ldp) : nullptr;
          float* p2c_h = p2c ? grown(t_p2c, ldp) : nullptr;
          if (c2p)
            head_mm(len, W, D, {a.qkv.mm(lowp, q_off), 3 * H, false},
                    {a.kr.mm(lowp, lo_row * H + h * D), H, true}, c2p_h + lo_row, W, dt, 1.0f);
          if (p2c)
            head_mm(len, W, D, {a.qkv.mm(lowp, q_off + H), 3 * H, false},
                    {a.qr.mm(lowp, lo_row * H + h * D), H, true}, p2c_h + lo_row, W, dt, 1.0f);
          kernels::disentangled_bias_forward(Sh, len, c2p_h, p2c_h, W, plan, inv_scale, 0, len);
        }
        const float* m = s.mask.empty() ? nullptr : s.mask.data() + r0;
        // P V reads dropout(probs): f32 rows, bf16 rows, or the probabilities themselves; kept in the layer
        // when training, in per-thread scratch otherwise.
        const int64_t at = s.probs_off[b] + h * len * len;
        float* pd = drop && !lowp ? (a.pd.empty() ? grown(t_pd, len * len) : a.pd.data() + at) : nullptr;
        bf16* pd_b = lowp ? (a.pd_b.empty() ? grown(t_pd_b, len * len) : a.pd_b.data() + at) : nullptr;
        // XSoftmax: masked keys get probability 0, a masked query's row is all 0. Each row's dropout (and
        // bf16 copy) follows its softmax while the row is in cache.
        for (int64_t i = 0; i < len; ++i) {
          float* row = Sh + i * len;
          if (m && m[i] == 0.0f) {
            std::fill(row, row + len, 0.0f);
          } else {
            // A masked key's score drops to the lowest float, so its exp underflows to exactly 0.
            if (m) {
#pragma omp simd
              for (int64_t j = 0; j < len; ++j) row[j] = m[j] != 0.0f ? row[j] : kLowest;
            }
            float mx = kLowest;
#pragma omp simd reduction(max : mx)
            for (int64_t j = 0; j < len; ++j) mx = std::max(mx, row[j]);
            float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
            for (int64_t j = 0; j < len; ++j) {
              row[j] = kernels::fast_exp(row[j] - mx);
              sum += row[j];
            }
            const float inv = 1.0f / sum;
#pragma omp simd
            for (int64_t j = 0; j < len; ++j) row[j] *= inv;
          }
          if (pd || pd_b)
            dropped_row(pd ? pd + i * len : nullptr, pd_b ? pd_b + i * len : nullptr, row, len,
                        attn_row_site(attn_site, b, h, i, NH, T));
        }
        const void* PDmm = lowp ? static_cast<const void*>(pd_b) : static_cast<const void*>(drop ? pd : Sh);
        head_mm(len, D, len, {PDmm, len, false}, {a.qkv.mm(lowp, q_off + 2 * H), 3 * H, false},
                a.ctx.f.data() + r0 * H + h * D, H, dt, 1.0f);
      }
    a.ctx.sync(lowp);

    // Output projection, residual, LayerNorm; FFN, residual, LayerNorm.
    a.res1.resize(static_cast<size_t>(N * H));
    kernels::linear_forward(s.dres.data(), DType::f32, a.ctx.mm(lowp), weight(lo.attn_out_w),
                            P + lo.attn_out_b, N, H, H, dt);
    a.mean1.resize(static_cast<size_t>(N));
    a.rstd1.resize(static_cast<size_t>(N));
    a.h1.resize(N * H, lowp);
    kernels::dropout_residual_layernorm_forward(
        a.res1.data(), a.h1.f.data(), lowp ? a.h1.b.data() : nullptr, a.mean1.data(), a.rstd1.data(),
        s.dres.data(), x.f.data(), P + lo.ln1_w, P + lo.ln1_b, N, H, eps, site(p_hidden, sid + 1), row_pos);
    a.inter.resize(static_cast<size_t>(N * I));
    kernels::linear_forward(a.inter.data(), DType::f32, a.h1.mm(lowp), weight(lo.ffn_in_w), P + lo.ffn_in_b,
                            N, H, I, dt);
    a.act.resize(N * I, lowp);
    kernels::activation_forward(a.act.f.data(), lowp ? a.act.b.data() : nullptr, a.inter.data(), N * I, act);
    a.res2.resize(static_cast<size_t>(N * H));
    kernels::linear_forward(s.dres.data(), DType::f32, a.act.mm(lowp), weight(lo.ffn_out_w), P + lo.ffn_out_b,
                            N, I, H, dt);
    a.mean2.resize(static_cast<size_t>(N));
    a.rstd2.resize(static_cast<size_t>(N));
    kernels::dropout_residual_layernorm_forward(a.res2.data(), next.f.data(), lowp ? next.b.data() : nullptr,
                                                a.mean2.data(), a.rstd2.data(), s.dres.data(), a.h1.f.data(),
                                                P + lo.ln2_w, P + lo.ln2_b, N, H, eps,
                                                site(p_hidden, sid + 2), row_pos);
  }

  HeadPass pass = head_pass(options, 1.0f, false);
  const Act& out = s.layers[keep ? L : L % 2].x;
  return head_->forward(pass, batch, out.mm(lowp), out.f.data());
}

void EncoderModel::deberta_backward(const GradReadyFn& on_ready, float loss_scale, bool accumulate) {
  CT_CHECK(deberta_ && deberta_->have_forward, "model backward: no forward pass to differentiate");
  CT_CHECK(deberta_->kept, "model backward: the last forward ran with keep_activations off (inference)");
  CT_CHECK(head_->has_loss(), "model backward: the last forward had no labels (",
           layout_.head_kind == HeadKind::span ? "start/end positions" : "labels", "), so there is no loss");
  DebertaState& s = *deberta_;
  const ModelConfig& c = config_;
  const int64_t B = s.B, T = s.T, N = s.N, H = c.hidden_size, I = c.intermediate_size;
  const int64_t E = c.embedding_width(), NH = c.num_attention_heads, D = H / NH, L = c.num_hidden_layers;
  const DType dt = precision_ == Precision::bf16 ? DType::bf16 : DType::f32;
  const bool lowp = dt == DType::bf16;
  const kernels::Activation act = kernels::activation_from_name(c.hidden_act);
  const StepOptions& options = s.opts;
  const int64_t* row_pos = s.cu.empty() ? nullptr : s.row_pos.data();
  // Embedding dropout (site 0) acts on H-wide rows here, after embed_proj, not E-wide ones as in ELECTRA.
  auto site = [&](double p, uint64_t id) {
    kernels::DropoutSite st = dropout_site(options, p, id, T);
    if (id == 0 && st.row_streams) st.row_elems = T * H;
    return st;
  };
  const double p_hidden = c.hidden_dropout_prob, p_attn = c.attention_probs_dropout_prob;
  const float* P = params_;
  float* G = grads_;
  const bool rel = c.relative_attention, c2p = c.has_c2p(), p2c = c.has_p2c();
  const int32_t span = static_cast<int32_t>(c.relative_span());
  const int64_t R = rel ? 2 * static_cast<int64_t>(span) : 0;
  const float inv_scale = 1.0f / std::sqrt(static_cast<float>(D) * static_cast<float>(1 + c2p + p2c));

  auto prepare = [&](int64_t begin, int64_t end) {
    if (!accumulate) zero_f32(G + begin, end - begin);
  };
  auto report = [&](int64_t begin, int64_t end) {
    if (!on_ready) return;
    for (int64_t i = static_cast<int64_t>(layout_.params.size()) - 1; i >= 0; --i) {
      const ParamInfo& p = layout_.params[i];
      if (p.offset >= begin && p.offset < end) on_ready(p.offset, p.numel());
    }
  };
  auto resize = [](auto& v, int64_t n) { v.resize(static_cast<size_t>(n)); };
  resize(s.dx, N * H);
  resize(s.dres, N * H);
  resize(s.dctx, N * H);
  resize(s.dact, N * I);
  resize(s.dinter, N * I);
  resize(s.dqkv, N * 3 * H);
  if (lowp) {
    resize(s.dres_b, N * H);
    resize(s.dinter_b, N * I);
    resize(s.dqkv_b, N * 3 * H);
    resize(s.dctx_b, N * H);
  }
  auto mm = [&](const std::vector<float>& f, const std::vector<bf16>& b, int64_t off = 0) -> const void* {
    return lowp ? static_cast<const void*>(b.data() + off) : static_cast<const void*>(f.data() + off);
  };

  // The head; a tied decoder adds into the word embeddings' gradient, which starts from zero here.
  const bool tied = layout_.head_kind == HeadKind::masked_lm;
  prepare(layout_.head.begin, layout_.head.end);
  if (tied) prepare(layout_.word_emb, layout_.word_emb + c.vocab_size * E);
  head_->backward(head_pass(options, loss_scale, accumulate), s.dx.data());
  report(layout_.head.begin, layout_.head.end);

  if (rel) {
    resize(s.drel_total, R * H);
    zero_f32(s.drel_total.data(), R * H);
    resize(s.drel, R * H);
    if (c2p) {
      resize(s.dkr, R * H);
      resize(s.dkr_seq, B * R * H);
    }
    if (p2c) {
      resize(s.dqr, R * H);
      resize(s.dqr_seq, B * R * H);
    }
    if (lowp) {
      if (c2p) resize(s.dkr_b, R * H);
      if (p2c) resize(s.dqr_b, R * H);
    }
  }
  for (int64_t l = L - 1; l >= 0; --l) {
    const LayerOffsets& lo = layout_.layers[l];
    const DebertaState::Layer& a = s.layers[l];
    const uint64_t sid = 1 + 3 * static_cast<uint64_t>(l);
    prepare(lo.qkv_b, lo.qkv_b + 3 * H);
    prepare(lo.attn_out_b, lo.attn_out_b + H);
    prepare(lo.ln1_w, lo.ln1_w + 2 * H);
    prepare(lo.ffn_in_b, lo.ffn_in_b + I);
    prepare(lo.ffn_out_b, lo.ffn_out_b + H);
    prepare(lo.ln2_w, lo.ln2_w + 2 * H);
    if (lo.pos_key_w >= 0) prepare(lo.pos_key_w, lo.pos_key_b + H);
    if (lo.pos_query_w >= 0) prepare(lo.pos_query_w, lo.pos_query_b + H);

    // LN2, FFN.
    // s.dx becomes the residual branch's gradient (into h1), s.dres the FFN output's.
    kernels::dropout_residual_layernorm_backward(
        s.dx.data(), s.dres.data(), lowp ? s.dres_b.data() : nullptr, G + lo.ln2_w, G + lo.ln2_b, s.dx.data(),
        a.res2.data(), P + lo.ln2_w, a.mean2.data(), a.rstd2.data(), N, H, site(p_hidden, sid + 2), row_pos);
    linear_backward_input(s.dact.data(), mm(s.dres, s.dres_b), weight(lo.ffn_out_w), N, I, H, dt);
    linear_backward_params(G + lo.ffn_out_w, G + lo.ffn_out_b, s.dres.data(), mm(s.dres, s.dres_b),
                           a.act.mm(lowp), N, I, H, dt, accumulate);
    kernels::activation_backward(s.dinter.data(), s.dact.data(), a.inter.data(), N * I, act, false,
                                 lowp ? s.dinter_b.data() : nullptr);
    kernels::linear_backward(s.dx.data(), nullptr, nullptr, s.dinter.data(), mm(s.dinter, s.dinter_b),
                             a.h1.mm(lowp), weight(lo.ffn_in_w), N, H, I, dt);
    linear_backward_params(G + lo.ffn_in_w, G + lo.ffn_in_b, s.dinter.data(), mm(s.dinter, s.dinter_b),
                           a.h1.mm(lowp), N, H, I, dt, accumulate);

    // LN1, attention output.
    kernels::dropout_residual_layernorm_backward(
        s.dx.data(), s.dres.data(), lowp ? s.dres_b.data() : nullptr, G + lo.ln1_w, G + lo.ln1_b, s.dx.data(),
        a.res1.data(), P + lo.ln1_w, a.mean1.data(), a.rstd1.data(), N, H, site(p_hidden, sid + 1), row_pos);
    linear_backward_input(s.dctx.data(), mm(s.dres, s.dres_b), weight(lo.attn_out_w), N, H, H, dt);
    linear_backward_params(G + lo.attn_out_w, G + lo.attn_out_b, s.dres.data(), mm(s.dres, s.dres_b),
                           a.ctx.mm(lowp), N, H, H, dt, accumulate);
    if (lowp) to_bf16(s.dctx_b.data(), s.dctx.data(), N * H);

    // Attention: d probs, d scores, d Q/K/V and the position terms' share. One task per (sequence, head), its
    // products on its own thread, so a head's scores and their gradients stay in its core's caches. The
    // relative keys' / queries' gradients sum over the sequences: each sequence's share goes to its own
    // buffer (one writer per head's columns), added in sequence order afterwards, so the bits do not depend
    // on which thread ran what.
    const kernels::DropoutSite attn_site = site(p_attn, sid);
    const bool drop = attn_site.p > 0.0f, pos = rel && (c2p || p2c);
    CT_CHECK(
        a.pd_b.size() == (lowp ? a.probs.size() : 0) && a.pd.size() == (drop && !lowp ? a.probs.size() : 0),
        "model backward: layer ", l, " kept no dropped attention probabilities for this precision");
#pragma omp parallel for collapse(2) schedule(dynamic, 1)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < NH; ++h) {
        const int64_t r0 = s.row0(b), len = s.rows(b);
        const int64_t q_off = r0 * 3 * H + h * D;
        const float* Sh = a.probs.data() + s.probs_off[b] + h * len * len;
        // The dropped probabilities forward kept (V's gradient reads them).
        const int64_t at = s.probs_off[b] + h * len * len;
        const float* pd = drop && !lowp ? a.pd.data() + at : nullptr;
        const bf16* pd_b = lowp ? a.pd_b.data() + at : nullptr;
        const void* PDmm = lowp ? static_cast<const void*>(pd_b) : static_cast<const void*>(drop ? pd : Sh);
        const void* dctx_h = lowp ? static_cast<const void*>(s.dctx_b.data() + r0 * H + h * D)
                                  : static_cast<const void*>(s.dctx.data() + r0 * H + h * D);
        float* dq = s.dqkv.data() + r0 * 3 * H + h * D;
        // dV = PD^T dctx; dPD = dctx V^T.
        head_mm(len, D, len, {PDmm, len, true}, {dctx_h, H, false}, dq + 2 * H, 3 * H, dt, 1.0f);
        float* dS = grown(t_ds, len * len);
        head_mm(len, len, D, {dctx_h, H, false}, {a.qkv.mm(lowp, q_off + 2 * H), 3 * H, true}, dS, len, dt,
                1.0f);
        // Dropout's backward, then softmax's, row by row; masked entries (probability 0) get 0. The keep mask
        // is read off the dropped probabilities above (0: dropped, or P itself 0, where dS is 0 whatever the
        // mask), as the BERT family's attention does, instead of drawing the Philox stream a third time. The
        // bf16 copy the products read is written in the same pass.
        bf16* dSb = lowp ? grown(t_ds_b, len * len) : nullptr;
        const float keep_scale = drop ? 1.0f / (1.0f - attn_site.p) : 1.0f;
        for (int64_t i = 0; i < len; ++i) {
          float* g = dS + i * len;
          const float* p = Sh + i * len;
          if (drop && pd_b)
            softmax_backward_row(g, dSb + i * len, p, pd_b + i * len, len, keep_scale);
          else if (drop)
            softmax_backward_row(g, dSb ? dSb + i * len : nullptr, p, pd + i * len, len, keep_scale);
          else
            softmax_backward_row(g, dSb ? dSb + i * len : nullptr, p, static_cast<const float*>(nullptr), len,
                                 keep_scale);
        }
        int64_t lo_row = 0, W = 0;
        float *dc = nullptr, *dp = nullptr;
        bf16 *dc_b = nullptr, *dp_b = nullptr;
        if (pos) {
          // Written over each row's band (no zeroing pass), with their bf16 copies.
          const kernels::DisentangledPlan& plan = s.plans.at(len);
          lo_row = plan.lo;
          W = plan.hi - plan.lo + 1;
          const int64_t ldp = len * W + lo_row;
          dc = c2p ? grown(t_c2p, ldp) : nullptr;
          dp = p2c ? grown(t_p2c, ldp) : nullptr;
          kernels::disentangled_bias_backward(dc, dp, W, dS, len, plan, inv_scale);
          if (lowp && dc) f32_to_bf16(dc + lo_row, dc_b = grown(t_c2p_b, ldp), len * W);
          if (lowp && dp) f32_to_bf16(dp + lo_row, dp_b = grown(t_p2c_b, ldp), len * W);
        }
        const void* dSmm = lowp ? static_cast<const void*>(dSb) : static_cast<const void*>(dS);
        // dQ = dS K / scale, dK = dS^T Q / scale.
        head_mm(len, D, len, {dSmm, len, false}, {a.qkv.mm(lowp, q_off + H), 3 * H, false}, dq, 3 * H, dt,
                inv_scale);
        head_mm(len, D, len, {dSmm, len, true}, {a.qkv.mm(lowp, q_off), 3 * H, false}, dq + H, 3 * H, dt,
                inv_scale);
        // C2P = Q Kr^T: dQ += dC2P Kr, dKr += dC2P^T Q. P2C = K Qr^T: dK += dP2C Qr, dQr += dP2C^T K.
        auto position_term = [&](const float* dpos, const bf16* dpos_b, const Act& proj, int64_t own,
                                 std::vector<float>& dproj) {
          const void* dmm = lowp ? static_cast<const void*>(dpos_b) : static_cast<const void*>(dpos + lo_row);
          head_mm(len, D, W, {dmm, W, false}, {proj.mm(lowp, lo_row * H + h * D), H, false}, dq + own, 3 * H,
                  dt, 1.0f, true);
          head_mm(W, D, len, {dmm, W, true}, {a.qkv.mm(lowp, q_off + own), 3 * H, false},
                  dproj.data() + (b * R + lo_row) * H + h * D, H, dt, 1.0f);
        };
        if (pos && c2p) position_term(dc, dc_b, a.kr, 0, s.dkr_seq);
        if (pos && p2c) position_term(dp, dp_b, a.qr, H, s.dqr_seq);
      }
    // Each sequence wrote the band of rows its length reaches; summed in sequence order.
    std::vector<const kernels::DisentangledPlan*> band(static_cast<size_t>(pos ? B : 0));
    for (int64_t b = 0; b < static_cast<int64_t>(band.size()); ++b) band[b] = &s.plans.at(s.rows(b));
    auto sum_sequences = [&](std::vector<float>& total, const std::vector<float>& per_seq) {
#pragma omp parallel for schedule(static)
      for (int64_t r = 0; r < R; ++r) {
        float* out = total.data() + r * H;
        std::fill(out, out + H, 0.0f);
        for (int64_t b = 0; b < B; ++b) {
          if (r < band[b]->lo || r > band[b]->hi) continue;
          const float* x = per_seq.data() + (b * R + r) * H;
#pragma omp simd
          for (int64_t e = 0; e < H; ++e) out[e] += x[e];
        }
      }
    };
    if (pos && c2p) sum_sequences(s.dkr, s.dkr_seq);
    if (pos && p2c) sum_sequences(s.dqr, s.dqr_seq);
    if (lowp) to_bf16(s.dqkv_b.data(), s.dqkv.data(), N * 3 * H);
    kernels::linear_backward(s.dx.data(), nullptr, nullptr, s.dqkv.data(), mm(s.dqkv, s.dqkv_b), a.x.mm(lowp),
                             weight(lo.qkv_w), N, H, 3 * H, dt);
    linear_backward_params(G + lo.qkv_w, G + lo.qkv_b, s.dqkv.data(), mm(s.dqkv, s.dqkv_b), a.x.mm(lowp), N,
                           H, 3 * H, dt, accumulate);

    // The relative keys / queries back through their projections into the relative embeddings.
    if (rel && (c2p || p2c)) {
      kernels::DropoutSite pos_site = dropout_site(options, p_hidden, (uint64_t{1} << 22) + l, T);
      pos_site.row_streams = nullptr;
      const void* relp = a.relp.f.empty() ? s.rel.mm(lowp) : a.relp.mm(lowp);
      zero_f32(s.drel.data(), R * H);
      auto project_back = [&](std::vector<float>& dproj, std::vector<bf16>& dproj_b, int64_t w,
                              int64_t bias) {
        const void* dmm = dproj.data();
        if (lowp) {
          to_bf16(dproj_b.data(), dproj.data(), R * H);
          dmm = dproj_b.data();
        }
        kernels::linear_backward(s.drel.data(), G + w, G + bias, dproj.data(), dmm, relp, weight(w), R, H, H,
                                 dt);
      };
      if (c2p)
        project_back(s.dkr, s.dkr_b, c.share_att_key ? lo.qkv_w + H * H : lo.pos_key_w,
                     c.share_att_key ? lo.qkv_b + H : lo.pos_key_b);
      if (p2c)
        project_back(s.dqr, s.dqr_b, c.share_att_key ? lo.qkv_w : lo.pos_query_w,
                     c.share_att_key ? lo.qkv_b : lo.pos_query_b);
      apply_dropout(s.drel.data(), nullptr, s.drel.data(), R * H, pos_site);
      add_into(s.drel_total.data(), s.drel_total.data(), s.drel.data(), R * H);
    }
    report(lo.begin, lo.end);
  }

  // Relative embeddings (and their LayerNorm).
  if (rel) {
    prepare(layout_.rel_emb, layout_.emb_end);
    if (c.norm_rel_ebd)
      kernels::layernorm_backward(G + layout_.rel_emb, G + layout_.rel_ln_w, G + layout_.rel_ln_b,
                                  s.drel_total.data(), P + layout_.rel_emb, P + layout_.rel_ln_w,
                                  s.rel_mean.data(), s.rel_rstd.data(), R, H, true);
    else
      add_into(G + layout_.rel_emb, G + layout_.rel_emb, s.drel_total.data(), R * H);
    report(layout_.rel_emb, layout_.emb_end);
  }

  // Embeddings: dropout, mask, LayerNorm, [embed_proj], the lookups.
  const int64_t emb_body_end = rel ? layout_.rel_emb : layout_.emb_end;
  // The word embeddings come first (emb_begin): only their rows a lookup wrote need zeroing.
  if (!tied && !accumulate) zero_word_grad();
  prepare(layout_.word_emb + c.vocab_size * E, emb_body_end);
  apply_dropout_rows(s.dx.data(), nullptr, s.dx.data(), N, H, T, s.cu, site(p_hidden, 0));
  if (!s.mask.empty())
    for (int64_t i = 0; i < N; ++i)
      if (s.mask[i] == 0.0f) std::fill(s.dx.data() + i * H, s.dx.data() + (i + 1) * H, 0.0f);
  const float* ln_in = c.projects_embeddings() ? s.emb_pre.data() : s.emb_sum.f.data();
  kernels::layernorm_backward(s.dres.data(), G + layout_.emb_ln_w, G + layout_.emb_ln_b, s.dx.data(), ln_in,
                              P + layout_.emb_ln_w, s.emb_mean.data(), s.emb_rstd.data(), N, H, false);
  const float* dsum = s.dres.data();
  if (c.projects_embeddings()) {
    resize(s.demb, N * E);
    const void* dmm = s.dres.data();
    if (lowp) {
      to_bf16(s.dres_b.data(), s.dres.data(), N * H);
      dmm = s.dres_b.data();
    }
    linear_backward_input(s.demb.data(), dmm, weight(layout_.emb_proj_w), N, E, H, dt);
    kernels::linear_backward(nullptr, G + layout_.emb_proj_w, nullptr, s.dres.data(), dmm, s.emb_sum.mm(lowp),
                             weight(layout_.emb_proj_w), N, E, H, dt);
    dsum = s.demb.data();
  }
  // nn.Embedding(padding_idx=pad_token_id): the lookup never writes the word table's padding row.
  float* word_pad = G + layout_.word_emb + c.pad_token_id * E;
  const std::vector<float> word_row(word_pad, word_pad + E);
  kernels::embedding_backward(G + layout_.word_emb, layout_.pos_emb >= 0 ? G + layout_.pos_emb : nullptr,
                              layout_.type_emb >= 0 ? G + layout_.type_emb : nullptr, dsum, s.ids.data(),
                              s.type_ids.data(), 1, N, E, s.pos_ids.data());
  copy_f32(word_pad, word_row.data(), E);
  note_word_grad(s.ids.data(), N);
  report(layout_.emb_begin, emb_body_end);
}

}  // namespace ct::model

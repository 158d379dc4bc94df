#include "model/decoder_model.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "core/error.h"
#include "kernels/causal_attention.h"
#include "kernels/embedding.h"
#include "kernels/geglu.h"
#include "kernels/linear.h"
#include "kernels/rmsnorm.h"

namespace ct::model {

namespace {

using kernels::RmsNormSpec;

void add_into(float* dst, const float* src, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

// Columns [col, col + n) of `rows` rows of stride ld into a dense [rows, n] buffer, or back (add).
void copy_cols(float* dst, const float* src, int64_t rows, int64_t ld, int64_t col, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) std::copy(src + r * ld + col, src + r * ld + col + n, dst + r * n);
}
void put_cols(float* dst, const float* src, int64_t rows, int64_t ld, int64_t col, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) std::copy(src + r * n, src + (r + 1) * n, dst + r * ld + col);
}

kernels::CausalAttentionDims attention_dims(const DecoderConfig& c, const DecoderLayerSpec& layer,
                                            const DecoderBatch& b) {
  kernels::CausalAttentionDims ad;
  ad.n_seqs = static_cast<int64_t>(b.seq_start.size());
  ad.NH = c.num_heads;
  ad.NKV = c.num_kv_heads;
  ad.HS = c.head_dim;
  ad.ld_q = c.num_heads * c.head_dim;
  ad.ld_kv = c.num_kv_heads * c.head_dim;
  ad.window = layer.window;
  ad.scale = c.score_scale;
  return ad;
}

// Adds the seconds from construction to destruction to *slot (when timing is on).
class Timed {
 public:
  Timed(DecoderStepTimes* t, double DecoderStepTimes::*slot) : t_(t), slot_(slot) {
    if (t_) t0_ = std::chrono::steady_clock::now();
  }
  ~Timed() {
    if (t_) t_->*slot_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  DecoderStepTimes* t_;
  double DecoderStepTimes::*slot_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

// What one layer's backward reads, kept from its forward.
struct DecoderModel::LayerActs {
  std::vector<float> x_in, n1, rstd1;   // layer input, input_layernorm out and rstd
  std::vector<float> qkv;               // q|k|v projections (biases added) [R, (H + 2 KV) d]
  std::vector<float> q_raw, k_raw;      // q and k before their norms (qk_norm only)
  std::vector<float> rstd_q, rstd_k;    // their norms' rstd
  std::vector<float> q, k, v;           // normed and rotated q and k, dense v: what attention saw
  std::vector<float> ctx, lse;          // attention out [R, H d], log-sum-exp [R, H]
  std::vector<float> a, rstd_pa;        // o_proj out; Gemma: post_attention_layernorm's rstd
  std::vector<float> x_mid, n2, rstd2;  // residual after attention; the MLP's input norm
  std::vector<float> gu, m;             // gate|up [R, 2 I]; act(gate) * up [R, I]
  std::vector<float> f, rstd_pf;        // down_proj out; Gemma: post_feedforward_layernorm's rstd
};

std::vector<int32_t> shift_labels(const int32_t* labels, const std::vector<int64_t>& seq_start,
                                  const std::vector<int64_t>& seq_len, int64_t rows) {
  std::vector<int32_t> t(rows, -100);
  for (size_t s = 0; s < seq_start.size(); ++s)
    for (int64_t i = 0; i + 1 < seq_len[s]; ++i) t[seq_start[s] + i] = labels[seq_start[s] + i + 1];
  return t;
}

DecoderModel::DecoderModel(DecoderConfig config, int64_t max_positions)
    : c_(std::move(config)), layout_(make_decoder_layout(c_)) {
  params_.assign(layout_.total, 0.0f);
  grads_.assign(layout_.total, 0.0f);
  CT_CHECK(max_positions > 0, "decoder: RoPE tables need a positive length, saw ", max_positions);
  for (const RopeSpec& r : c_.ropes) {
    const RopeFrequencies f = rope_frequencies(r, c_.head_dim, c_.max_positions, max_positions);
    rope_.push_back(kernels::make_rotary_table(max_positions, c_.head_dim, f.inv_freq, f.attention_scaling));
  }
}

const float* DecoderModel::head_weight() const {
  return params_.data() + (layout_.lm_head >= 0 ? layout_.lm_head : layout_.embed);
}

void DecoderModel::forward_layer(const DecoderBatch& b, int64_t li, std::vector<float>& x, LayerActs& A) {
  const int64_t R = b.rows, h = c_.hidden_size, d = c_.head_dim, H = c_.num_heads, KV = c_.num_kv_heads;
  const int64_t QKV = (H + 2 * KV) * d, I = c_.intermediate_size;
  const float* P = params_.data();
  const RmsNormSpec norm{static_cast<float>(c_.norm_eps), c_.norm == DecoderNorm::rms_unit_offset};
  const DecoderLayerOffsets& o = layout_.layers[li];
  A.x_in = x;
  A.n1.resize(R * h);
  A.rstd1.resize(R);
  {
    Timed timed(times_, &DecoderStepTimes::norms);
    kernels::rmsnorm_forward(A.n1.data(), nullptr, A.rstd1.data(), x.data(), P + o.norm_in, R, h, norm);
  }
  A.qkv.resize(R * QKV);
  {
    Timed timed(times_, &DecoderStepTimes::projections);
    kernels::linear_forward(A.qkv.data(), DType::f32, A.n1.data(), P + o.qkv_w,
                            o.qkv_b >= 0 ? P + o.qkv_b : nullptr, R, h, QKV, DType::f32);
  }
  A.q.resize(R * H * d);
  A.k.resize(R * KV * d);
  if (c_.qk_norm) {
    A.q_raw.resize(R * H * d);
    A.k_raw.resize(R * KV * d);
    copy_cols(A.q_raw.data(), A.qkv.data(), R, QKV, 0, H * d);
    copy_cols(A.k_raw.data(), A.qkv.data(), R, QKV, H * d, KV * d);
    A.rstd_q.resize(R * H);
    A.rstd_k.resize(R * KV);
    {
      Timed timed(times_, &DecoderStepTimes::norms);
      kernels::rmsnorm_forward(A.q.data(), nullptr, A.rstd_q.data(), A.q_raw.data(), P + o.q_norm, R * H, d,
                               norm);
    }
    {
      Timed timed(times_, &DecoderStepTimes::norms);
      kernels::rmsnorm_forward(A.k.data(), nullptr, A.rstd_k.data(), A.k_raw.data(), P + o.k_norm, R * KV, d,
                               norm);
    }
  } else {
    copy_cols(A.q.data(), A.qkv.data(), R, QKV, 0, H * d);
    copy_cols(A.k.data(), A.qkv.data(), R, QKV, H * d, KV * d);
  }
  const DecoderLayerSpec& spec = c_.layers[li];
  const kernels::RotaryTable& rope = rope_[spec.rope];
  {
    Timed timed(times_, &DecoderStepTimes::attention);
    kernels::rotary_forward(A.q.data(), b.position_ids, R, H, H * d, rope);
  }
  {
    Timed timed(times_, &DecoderStepTimes::attention);
    kernels::rotary_forward(A.k.data(), b.position_ids, R, KV, KV * d, rope);
  }
  const kernels::CausalAttentionDims ad = attention_dims(c_, spec, b);
  // v sits in the projection rows at their stride; attention gets a dense copy, which backward reads too.
  A.v.resize(R * KV * d);
  copy_cols(A.v.data(), A.qkv.data(), R, QKV, (H + KV) * d, KV * d);
  A.ctx.assign(R * H * d, 0.0f);
  A.lse.assign(R * H, 0.0f);
  {
    Timed timed(times_, &DecoderStepTimes::attention);
    kernels::causal_attention_forward(A.ctx.data(), A.lse.data(), A.q.data(), A.k.data(), A.v.data(),
                                      b.seq_start.data(), b.seq_len.data(), ad, DType::f32);
  }
  A.a.resize(R * h);
  {
    Timed timed(times_, &DecoderStepTimes::projections);
    kernels::linear_forward(A.a.data(), DType::f32, A.ctx.data(), P + o.o_w, o.o_b >= 0 ? P + o.o_b : nullptr,
                            R, H * d, h, DType::f32);
  }
  A.x_mid = x;
  const float* mlp_in_norm = P + o.norm_post_attn;
  if (c_.sandwich_norms) {
    std::vector<float> an(R * h);
    A.rstd_pa.resize(R);
    {
      Timed timed(times_, &DecoderStepTimes::norms);
      kernels::rmsnorm_forward(an.data(), nullptr, A.rstd_pa.data(), A.a.data(), P + o.norm_post_attn, R, h,
                               norm);
    }
    add_into(A.x_mid.data(), an.data(), R * h);
    mlp_in_norm = P + o.norm_pre_ff;
  } else {
    add_into(A.x_mid.data(), A.a.data(), R * h);
  }
  A.n2.resize(R * h);
  A.rstd2.resize(R);
  {
    Timed timed(times_, &DecoderStepTimes::norms);
    kernels::rmsnorm_forward(A.n2.data(), nullptr, A.rstd2.data(), A.x_mid.data(), mlp_in_norm, R, h, norm);
  }
  A.gu.resize(R * 2 * I);
  {
    Timed timed(times_, &DecoderStepTimes::projections);
    kernels::linear_forward(A.gu.data(), DType::f32, A.n2.data(), P + o.gate_up_w,
                            o.gate_up_b >= 0 ? P + o.gate_up_b : nullptr, R, h, 2 * I, DType::f32);
  }
  A.m.resize(R * I);
  {
    Timed timed(times_, &DecoderStepTimes::activation);
    kernels::geglu_forward(A.m.data(), A.gu.data(), R, I, c_.act);
  }
  A.f.resize(R * h);
  {
    Timed timed(times_, &DecoderStepTimes::projections);
    kernels::linear_forward(A.f.data(), DType::f32, A.m.data(), P + o.down_w,
                            o.down_b >= 0 ? P + o.down_b : nullptr, R, I, h, DType::f32);
  }
  x = A.x_mid;
  if (c_.sandwich_norms) {
    std::vector<float> fn(R * h);
    A.rstd_pf.resize(R);
    {
      Timed timed(times_, &DecoderStepTimes::norms);
      kernels::rmsnorm_forward(fn.data(), nullptr, A.rstd_pf.data(), A.f.data(), P + o.norm_post_ff, R, h,
                               norm);
    }
    add_into(x.data(), fn.data(), R * h);
  } else {
    add_into(x.data(), A.f.data(), R * h);
  }
}

void DecoderModel::forward_body(const DecoderBatch& b, std::vector<LayerActs>& acts,
                                std::vector<float>& hidden, std::vector<float>& final_rstd,
                                std::vector<float>& x_final) {
  const int64_t R = b.rows, h = c_.hidden_size, V = c_.vocab_size;
  CT_CHECK(b.seq_start.size() == b.seq_len.size(), "decoder batch: ", b.seq_start.size(), " starts for ",
           b.seq_len.size(), " lengths");
  for (size_t s = 0; s < b.seq_start.size(); ++s)
    CT_CHECK(b.seq_start[s] >= 0 && b.seq_len[s] >= 0 && b.seq_start[s] + b.seq_len[s] <= R,
             "decoder batch: sequence ", s, " spans rows [", b.seq_start[s], ", ",
             b.seq_start[s] + b.seq_len[s], ") of ", R);
  const float* P = params_.data();
  const RmsNormSpec norm{static_cast<float>(c_.norm_eps), c_.norm == DecoderNorm::rms_unit_offset};
  std::vector<float> x(R * h);
  for (int64_t r = 0; r < R; ++r) {
    CT_CHECK(b.input_ids[r] >= 0 && b.input_ids[r] < V, "decoder batch: input_ids[", r,
             "] = ", b.input_ids[r], " outside the vocabulary [0, ", V, ")");
    const float* e = P + layout_.embed + static_cast<int64_t>(b.input_ids[r]) * h;
    for (int64_t j = 0; j < h; ++j) x[r * h + j] = c_.embed_scale != 0.0f ? e[j] * c_.embed_scale : e[j];
  }
  acts.assign(c_.num_layers, LayerActs{});
  for (int64_t li = 0; li < c_.num_layers; ++li) {
    forward_layer(b, li, x, acts[li]);
    // Checkpointing keeps only each layer's input; backward runs the layer again from it.
    if (checkpointing_) {
      std::vector<float> x_in = std::move(acts[li].x_in);
      acts[li] = LayerActs{};
      acts[li].x_in = std::move(x_in);
    }
  }
  x_final = x;
  hidden.resize(R * h);
  final_rstd.resize(R);
  {
    Timed timed(times_, &DecoderStepTimes::norms);
    kernels::rmsnorm_forward(hidden.data(), nullptr, final_rstd.data(), x.data(), P + layout_.final_norm, R,
                             h, norm);
  }
}

void DecoderModel::backward_body(const DecoderBatch& b, std::vector<LayerActs>& acts,
                                 std::vector<float>& dhidden, const std::vector<float>& final_rstd,
                                 const std::vector<float>& x_final) {
  const int64_t R = b.rows, h = c_.hidden_size, d = c_.head_dim, H = c_.num_heads, KV = c_.num_kv_heads;
  const int64_t QKV = (H + 2 * KV) * d, I = c_.intermediate_size;
  const float* P = params_.data();
  float* G = grads_.data();
  const RmsNormSpec norm{static_cast<float>(c_.norm_eps), c_.norm == DecoderNorm::rms_unit_offset};
  std::vector<float> dx(R * h, 0.0f);  // gradient of the residual stream
  {
    Timed timed(times_, &DecoderStepTimes::norms);
    kernels::rmsnorm_backward(dx.data(), G + layout_.final_norm, dhidden.data(), x_final.data(),
                              P + layout_.final_norm, final_rstd.data(), R, h, norm);
  }
  std::vector<float> tmp(R * h), dm(R * I), dgu(R * 2 * I), dn(R * h), dctx(R * H * d), dq(R * H * d),
      dk(R * KV * d), dv(R * KV * d), dqkv(R * QKV);
  for (int64_t li = c_.num_layers - 1; li >= 0; --li) {
    const DecoderLayerOffsets& o = layout_.layers[li];
    LayerActs& A = acts[li];
    if (checkpointing_) {
      std::vector<float> x = A.x_in;
      forward_layer(b, li, x, A);
    }
    // MLP branch: x_out = x_mid + [post_ff_norm](down(act(gate) * up)(norm2(x_mid)))
    const float* df = dx.data();
    if (c_.sandwich_norms) {
      std::fill(tmp.begin(), tmp.end(), 0.0f);
      {
        Timed timed(times_, &DecoderStepTimes::norms);
        kernels::rmsnorm_backward(tmp.data(), G + o.norm_post_ff, dx.data(), A.f.data(), P + o.norm_post_ff,
                                  A.rstd_pf.data(), R, h, norm);
      }
      df = tmp.data();
    }
    std::fill(dm.begin(), dm.end(), 0.0f);
    {
      Timed timed(times_, &DecoderStepTimes::projections);
      kernels::linear_backward(dm.data(), G + o.down_w, o.down_b >= 0 ? G + o.down_b : nullptr, df, df,
                               A.m.data(), P + o.down_w, R, I, h, DType::f32);
    }
    {
      Timed timed(times_, &DecoderStepTimes::activation);
      kernels::geglu_backward(dgu.data(), dm.data(), A.gu.data(), R, I, c_.act);
    }
    std::fill(dn.begin(), dn.end(), 0.0f);
    {
      Timed timed(times_, &DecoderStepTimes::projections);
      kernels::linear_backward(dn.data(), G + o.gate_up_w, o.gate_up_b >= 0 ? G + o.gate_up_b : nullptr,
                               dgu.data(), dgu.data(), A.n2.data(), P + o.gate_up_w, R, h, 2 * I, DType::f32);
    }
    const int64_t mlp_norm = c_.sandwich_norms ? o.norm_pre_ff : o.norm_post_attn;
    {
      Timed timed(times_, &DecoderStepTimes::norms);
      kernels::rmsnorm_backward(dx.data(), G + mlp_norm, dn.data(), A.x_mid.data(), P + mlp_norm,
                                A.rstd2.data(), R, h, norm);
    }
    // Attention branch: x_mid = x_in + [post_attn_norm](o_proj(attention(rope(norm(q)), rope(norm(k)), v)))
    const float* da = dx.data();
    if (c_.sandwich_norms) {
      std::fill(tmp.begin(), tmp.end(), 0.0f);
      {
        Timed timed(times_, &DecoderStepTimes::norms);
        kernels::rmsnorm_backward(tmp.data(), G + o.norm_post_attn, dx.data(), A.a.data(),
                                  P + o.norm_post_attn, A.rstd_pa.data(), R, h, norm);
      }
      da = tmp.data();
    }
    std::fill(dctx.begin(), dctx.end(), 0.0f);
    {
      Timed timed(times_, &DecoderStepTimes::projections);
      kernels::linear_backward(dctx.data(), G + o.o_w, o.o_b >= 0 ? G + o.o_b : nullptr, da, da, A.ctx.data(),
                               P + o.o_w, R, H * d, h, DType::f32);
    }
    const DecoderLayerSpec& spec = c_.layers[li];
    const kernels::CausalAttentionDims ad = attention_dims(c_, spec, b);
    std::fill(dq.begin(), dq.end(), 0.0f);
    std::fill(dk.begin(), dk.end(), 0.0f);
    std::fill(dv.begin(), dv.end(), 0.0f);
    {
      Timed timed(times_, &DecoderStepTimes::attention);
      kernels::causal_attention_backward(dq.data(), dk.data(), dv.data(), dctx.data(), A.q.data(), A.k.data(),
                                         A.v.data(), A.ctx.data(), A.lse.data(), b.seq_start.data(),
                                         b.seq_len.data(), ad, DType::f32);
    }
    const kernels::RotaryTable& rope = rope_[spec.rope];
    {
      Timed timed(times_, &DecoderStepTimes::attention);
      kernels::rotary_backward(dq.data(), b.position_ids, R, H, H * d, rope);
    }
    {
      Timed timed(times_, &DecoderStepTimes::attention);
      kernels::rotary_backward(dk.data(), b.position_ids, R, KV, KV * d, rope);
    }
    if (c_.qk_norm) {
      std::vector<float> dq_raw(R * H * d, 0.0f), dk_raw(R * KV * d, 0.0f);
      {
        Timed timed(times_, &DecoderStepTimes::norms);
        kernels::rmsnorm_backward(dq_raw.data(), G + o.q_norm, dq.data(), A.q_raw.data(), P + o.q_norm,
                                  A.rstd_q.data(), R * H, d, norm);
      }
      {
        Timed timed(times_, &DecoderStepTimes::norms);
        kernels::rmsnorm_backward(dk_raw.data(), G + o.k_norm, dk.data(), A.k_raw.data(), P + o.k_norm,
                                  A.rstd_k.data(), R * KV, d, norm);
      }
      dq.swap(dq_raw);
      dk.swap(dk_raw);
    }
    put_cols(dqkv.data(), dq.data(), R, QKV, 0, H * d);
    put_cols(dqkv.data(), dk.data(), R, QKV, H * d, KV * d);
    put_cols(dqkv.data(), dv.data(), R, QKV, (H + KV) * d, KV * d);
    std::fill(dn.begin(), dn.end(), 0.0f);
    {
      Timed timed(times_, &DecoderStepTimes::projections);
      kernels::linear_backward(dn.data(), G + o.qkv_w, o.qkv_b >= 0 ? G + o.qkv_b : nullptr, dqkv.data(),
                               dqkv.data(), A.n1.data(), P + o.qkv_w, R, h, QKV, DType::f32);
    }
    {
      Timed timed(times_, &DecoderStepTimes::norms);
      kernels::rmsnorm_backward(dx.data(), G + o.norm_in, dn.data(), A.x_in.data(), P + o.norm_in,
                                A.rstd1.data(), R, h, norm);
    }
    A = LayerActs{};  // done with this layer: its memory goes before the next one's recomputation
  }
  if (c_.embed_scale != 0.0f)
    for (float& g : dx) g *= c_.embed_scale;
  kernels::embedding_backward(G + layout_.embed, nullptr, nullptr, dx.data(), b.input_ids, nullptr, 1, R, h);
}

kernels::LmHeadLossSums DecoderModel::step(const DecoderBatch& b, float grad_scale, bool backward,
                                           int32_t* argmax) {
  std::vector<LayerActs> acts;
  std::vector<float> hidden, final_rstd, x_final;
  forward_body(b, acts, hidden, final_rstd, x_final);
  const int64_t h = c_.hidden_size;
  std::vector<int64_t> rows;
  std::vector<int32_t> tgt;
  for (int64_t r = 0; r < b.rows; ++r)
    if (b.targets[r] >= 0) {
      rows.push_back(r);
      tgt.push_back(b.targets[r]);
    }
  const int64_t n = static_cast<int64_t>(rows.size());
  std::vector<float> ht(n * h), dht(backward ? n * h : 0, 0.0f);
  for (int64_t i = 0; i < n; ++i) std::copy_n(hidden.data() + rows[i] * h, h, ht.data() + i * h);
  kernels::LmHeadLossSpec spec;
  spec.N = n;
  spec.C = h;
  spec.V = c_.vocab_size;
  spec.grad_scale = grad_scale;
  std::vector<int32_t> arg(n);
  float* dhead =
      backward ? grads_.data() + (layout_.lm_head >= 0 ? layout_.lm_head : layout_.embed) : nullptr;
  std::optional<Timed> loss_time(std::in_place, times_, &DecoderStepTimes::lm_head_loss);
  const kernels::LmHeadLossSums sums = kernels::lm_head_loss(
      ht.data(), head_weight(), tgt.data(), spec, backward ? dht.data() : nullptr, dhead, arg.data());
  loss_time.reset();
  if (argmax) {
    std::fill(argmax, argmax + b.rows, -1);
    for (int64_t i = 0; i < n; ++i) argmax[rows[i]] = arg[i];
  }
  if (backward) {
    std::vector<float> dhidden(b.rows * h, 0.0f);
    for (int64_t i = 0; i < n; ++i) std::copy_n(dht.data() + i * h, h, dhidden.data() + rows[i] * h);
    backward_body(b, acts, dhidden, final_rstd, x_final);
  }
  return sums;
}

void DecoderModel::logits(const DecoderBatch& b, float* out) {
  std::vector<LayerActs> acts;
  std::vector<float> hidden, final_rstd, x_final;
  forward_body(b, acts, hidden, final_rstd, x_final);
  {
    Timed timed(times_, &DecoderStepTimes::projections);
    kernels::linear_forward(out, DType::f32, hidden.data(), head_weight(), nullptr, b.rows, c_.hidden_size,
                            c_.vocab_size, DType::f32);
  }
}

}  // namespace ct::model

// Masked-LM heads: a transform (dense -> activation -> LayerNorm) and a decoder tied to the word embeddings
// plus its own bias, on the masked tokens only: HF projects every position onto the vocabulary and ignores
// all but the labelled ones in the loss, so the loss and every gradient are the same while the projection,
// the step's largest matmul at BERT-base and 128 tokens, shrinks to the ~15% of rows that are masked.
//   BERT:       cls.predictions.transform.{dense, LayerNorm} (hidden_act), cls.predictions.bias
//   RoBERTa:    lm_head.{dense, layer_norm} (GELU), lm_head.bias
//   DistilBERT: vocab_transform, vocab_layer_norm (its activation), vocab_projector.bias
//   ELECTRA:    generator_predictions.{dense, LayerNorm} (GELU, H -> embedding_size), generator_lm_head.bias
#include <cstring>
#include <limits>

#include "core/error.h"
#include "kernels/activation.h"
#include "kernels/cross_entropy.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "model/head.h"
#include "model/model_ops.h"

namespace ct::model {
namespace {

class MaskedLmHead final : public Head {
 public:
  float forward(const HeadPass& ps, const Batch& batch, const void* hidden, const float*) override {
    const ModelConfig& c = *ps.config;
    const HeadOffsets& o = ps.layout->head;
    const int64_t N = ps.N, H = ps.H, W = o.dense_out, V = o.out_features;
    act_ = c.is_roberta_like() || c.is_electra() ? kernels::Activation::gelu
                                                 : kernels::activation_from_name(c.hidden_act);
    rows_.clear();
    targets_.clear();
    have_loss_ = batch.labels != nullptr;
    // Without labels every token is projected (fill-mask inference wants them all).
    for (int64_t i = 0; i < N; ++i)
      if (!have_loss_ || batch.labels[i] != -100) {
        rows_.push_back(i);
        if (have_loss_) targets_.push_back(batch.labels[i]);
      }
    const int64_t M = static_cast<int64_t>(rows_.size());
    logits_.assign(static_cast<size_t>(M * V), 0.0f);
    if (M == 0) return std::numeric_limits<float>::quiet_NaN();  // torch: mean over nothing
    const int64_t esz = dtype_size(ps.dt);
    x_.resize(static_cast<size_t>(M * H * esz));
    for (int64_t m = 0; m < M; ++m)
      std::memcpy(x_.data() + m * H * esz, static_cast<const char*>(hidden) + rows_[m] * H * esz,
                  static_cast<size_t>(H * esz));
    z_.resize(M * W);
    kernels::linear_forward(z_.f.data(), DType::f32, x_.data(), ps.weight(o.dense_w), ps.P + o.dense_b, M, H,
                            W, ps.dt);
    a_.resize(M * W);
    kernels::activation_forward(a_.f.data(), nullptr, z_.f.data(), M * W, act_);
    t_.resize(M * W);
    mean_.resize(M);
    rstd_.resize(M);
    kernels::layernorm_forward(t_.f.data(), ps.dt == DType::bf16 ? t_.b.data() : nullptr, mean_.data(),
                               rstd_.data(), a_.f.data(), ps.P + o.norm_w, ps.P + o.norm_b, M, W,
                               static_cast<float>(c.layer_norm_eps));
    kernels::linear_forward(logits_.data(), DType::f32, t_.mm(ps.dt), ps.weight(ps.layout->word_emb),
                            ps.P + o.out_b, M, W, V, ps.dt);
    if (!have_loss_) return std::numeric_limits<float>::quiet_NaN();
    lse_.resize(M);
    return kernels::cross_entropy_forward(lse_.data(), logits_.data(), targets_.data(), M, V, V, 1, -100);
  }

  bool rows_read(const HeadPass& ps, const Batch& batch, std::vector<int64_t>& rows) const override {
    if (!batch.labels) return false;  // fill-mask inference projects every token
    rows.clear();
    for (int64_t i = 0; i < ps.N; ++i)
      if (batch.labels[i] != -100) rows.push_back(i);
    return true;
  }

  const std::vector<float>& logits() const override { return logits_; }
  bool has_loss() const override { return have_loss_; }

  void backward(const HeadPass& ps, float* dhidden) override {
    const HeadOffsets& o = ps.layout->head;
    const int64_t N = ps.N, H = ps.H, W = o.dense_out, V = o.out_features;
    const int64_t M = static_cast<int64_t>(rows_.size());
    zero_f32(dhidden, N * H);
    if (M == 0) return;  // no masked token: nothing reaches the model (torch's loss would be NaN)
    dlogits_.resize(M * V);
    kernels::cross_entropy_backward(dlogits_.f.data(), logits_.data(), lse_.data(), targets_.data(), M, V, V,
                                    1, -100, ps.loss_scale);
    dlogits_.sync(ps.dt);
    // The tied decoder: its weight gradient lands in the word embeddings' rows, all of them.
    dt_.resize(M * W);
    linear_backward_input(dt_.f.data(), dlogits_.mm(ps.dt), ps.weight(ps.layout->word_emb), M, W, V, ps.dt);
    linear_backward_params(ps.G + ps.layout->word_emb, ps.G + o.out_b, dlogits_.f.data(), dlogits_.mm(ps.dt),
                           t_.mm(ps.dt), M, W, V, ps.dt, true);
    da_.resize(M * W);
    kernels::layernorm_backward(da_.f.data(), ps.G + o.norm_w, ps.G + o.norm_b, dt_.f.data(), a_.f.data(),
                                ps.P + o.norm_w, mean_.data(), rstd_.data(), M, W, false);
    dz_.resize(M * W);
    kernels::activation_backward(dz_.f.data(), da_.f.data(), z_.f.data(), M * W, act_, false);
    dz_.sync(ps.dt);
    dx_.resize(M * H);
    linear_backward_input(dx_.f.data(), dz_.mm(ps.dt), ps.weight(o.dense_w), M, H, W, ps.dt);
    linear_backward_params(ps.G + o.dense_w, ps.G + o.dense_b, dz_.f.data(), dz_.mm(ps.dt), x_.data(), M, H,
                           W, ps.dt, true);
    for (int64_t m = 0; m < M; ++m) copy_f32(dhidden + rows_[m] * H, dx_.f.data() + m * H, H);
  }

 private:
  kernels::Activation act_ = kernels::Activation::gelu;
  std::vector<int64_t> rows_, targets_;
  std::vector<char> x_;  // the masked rows of the final hidden state, run precision
  HeadTensor z_, a_, t_, dlogits_, dt_, da_, dz_, dx_;
  std::vector<float> logits_, lse_, mean_, rstd_;
  bool have_loss_ = false;
};

}  // namespace

std::unique_ptr<Head> make_masked_lm_head() {
  return std::make_unique<MaskedLmHead>();
}

}  // namespace ct::model

// ModernBERT's task heads: the prediction head (head.dense without bias -> classifier_activation ->
// head.norm without bias) over some rows of the final hidden state, then
//   sequence classification and multiple choice (one logit per choice, cross-entropy over each example's):
//                            rows = each feature pooled (classifier_pooling "cls": its first token; "mean":
//                            the mean over its own tokens, HF's masked mean), dropout, classifier;
//   token classification:    rows = every token, dropout, classifier, cross-entropy over labels != -100;
//   question answering:      rows = every token, dropout, then the span head (model/heads/span_head.cpp)
//                            with classifier as its qa_outputs: start/end logits and HF's QA loss;
//   masked LM:               rows = the labelled tokens (all without labels), the decoder tied to
//                            tok_embeddings plus decoder.bias (HF's sparse_prediction: the same loss and
//                            gradients as projecting every token).
// Sequence classification picks its loss from problem_type as transformers does.
#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "kernels/activation.h"
#include "kernels/bce_with_logits.h"
#include "kernels/cross_entropy.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "kernels/mse_loss.h"
#include "model/head.h"
#include "model/model_ops.h"
#include "model/modernbert.h"

namespace ct::model {
namespace {

enum class Loss { none, mse, cross_entropy, bce };

class ModernBertHead final : public Head {
 public:
  explicit ModernBertHead(HeadKind kind) : kind_(kind) {
    if (kind == HeadKind::span) span_ = make_span_head();
  }

  float forward(const HeadPass& ps, const Batch& batch, const void*, const float* hidden) override {
    const ModelConfig& c = *ps.config;
    const HeadOffsets& o = ps.layout->head;
    const int64_t N = ps.N, H = ps.H, C = o.out_features;
    act_ = kernels::activation_from_name(c.classifier_activation);
    loss_ = Loss::none;
    // Gather (or pool) the rows the head runs on, in f32.
    rows_.clear();
    targets_.clear();
    weights_.clear();
    if (pooled()) {
      M_ = ps.B;
      x_.resize(M_ * H);
      for (int64_t b = 0; b < ps.B; ++b) {
        float* xb = x_.f.data() + b * H;
        if (c.classifier_pooling == "cls") {
          copy_f32(xb, hidden + ps.first_row(b) * H, H);
          continue;
        }
        // Mean over the feature's own tokens: its packed rows, or the padded row's attended tokens.
        const int64_t r0 = ps.first_row(b), r1 = ps.packed() ? (*ps.cu)[b + 1] : r0 + ps.T;
        double count = 0;
        for (int64_t r = r0; r < r1; ++r)
          if (!batch.attention_mask || ps.packed() || batch.attention_mask[r] != 0) ++count;
        const float w = static_cast<float>(1.0 / count);
        std::vector<double> acc(static_cast<size_t>(H), 0.0);
        for (int64_t r = r0; r < r1; ++r) {
          if (batch.attention_mask && !ps.packed() && batch.attention_mask[r] == 0) continue;
          rows_.push_back(r);
          weights_.push_back(w);
          for (int64_t k = 0; k < H; ++k) acc[k] += hidden[r * H + k];
        }
        for (int64_t k = 0; k < H; ++k) xb[k] = static_cast<float>(acc[k] / count);
      }
    } else {
      const bool mlm = kind_ == HeadKind::masked_lm;
      for (int64_t i = 0; i < N; ++i)
        if (!mlm || !batch.labels || batch.labels[i] != -100) rows_.push_back(i);
      M_ = static_cast<int64_t>(rows_.size());
      x_.resize(M_ * H);
      for (int64_t m = 0; m < M_; ++m) copy_f32(x_.f.data() + m * H, hidden + rows_[m] * H, H);
    }
    x_.sync(ps.dt);
    logits_.assign(static_cast<size_t>(M_ * C), 0.0f);
    if (M_ == 0) return std::numeric_limits<float>::quiet_NaN();
    // Prediction head.
    z_.resize(M_ * H);
    kernels::linear_forward(z_.f.data(), DType::f32, x_.mm(ps.dt), ps.weight(o.dense_w), nullptr, M_, H, H,
                            ps.dt);
    a_.resize(M_ * H);
    kernels::activation_forward(a_.f.data(), nullptr, z_.f.data(), M_ * H, act_);
    t_.resize(M_ * H);
    mean_.resize(M_);
    rstd_.resize(M_);
    kernels::layernorm_forward(t_.f.data(), nullptr, mean_.data(), rstd_.data(), a_.f.data(), ps.P + o.norm_w,
                               nullptr, M_, H, static_cast<float>(c.layer_norm_eps));
    drop(ps, t_.f.data());
    t_.sync(ps.dt);
    if (span_) return span_->forward(ps, batch, t_.mm(ps.dt), t_.f.data());
    const int64_t out_w = kind_ == HeadKind::masked_lm ? ps.layout->word_emb : o.out_w;
    kernels::linear_forward(logits_.data(), DType::f32, t_.mm(ps.dt), ps.weight(out_w), ps.P + o.out_b, M_, H,
                            C, ps.dt);
    return loss(c, batch, C);
  }

  const std::vector<float>& logits() const override { return span_ ? span_->logits() : logits_; }
  bool has_loss() const override { return span_ ? span_->has_loss() : loss_ != Loss::none; }

  void backward(const HeadPass& ps, float* dhidden) override {
    const HeadOffsets& o = ps.layout->head;
    const int64_t H = ps.H;
    zero_f32(dhidden, ps.N * H);
    if (M_ == 0) return;
    dt_.resize(M_ * H);
    if (span_)
      span_->backward(ps, dt_.f.data());  // d t, and the classifier's gradients
    else
      output_backward(ps);
    drop(ps, dt_.f.data());
    da_.resize(M_ * H);
    kernels::layernorm_backward(da_.f.data(), ps.G + o.norm_w, nullptr, dt_.f.data(), a_.f.data(),
                                ps.P + o.norm_w, mean_.data(), rstd_.data(), M_, H, false);
    dz_.resize(M_ * H);
    kernels::activation_backward(dz_.f.data(), da_.f.data(), z_.f.data(), M_ * H, act_, false);
    dz_.sync(ps.dt);
    dx_.resize(M_ * H);
    linear_backward_input(dx_.f.data(), dz_.mm(ps.dt), ps.weight(o.dense_w), M_, H, H, ps.dt);
    linear_backward_params(ps.G + o.dense_w, nullptr, dz_.f.data(), dz_.mm(ps.dt), x_.mm(ps.dt), M_, H, H,
                           ps.dt, true);
    const float* dx = dx_.f.data();
    if (!pooled()) {
      for (int64_t m = 0; m < M_; ++m) copy_f32(dhidden + rows_[m] * H, dx + m * H, H);
    } else if (ps.config->classifier_pooling == "cls") {
      for (int64_t b = 0; b < ps.B; ++b) copy_f32(dhidden + ps.first_row(b) * H, dx + b * H, H);
    } else {  // mean: every pooled token gets its feature's gradient / count
      size_t k = 0;
      for (int64_t b = 0; b < ps.B; ++b) {
        const int64_t r0 = ps.first_row(b), r1 = ps.packed() ? (*ps.cu)[b + 1] : r0 + ps.T;
        for (; k < rows_.size() && rows_[k] >= r0 && rows_[k] < r1; ++k)
          for (int64_t j = 0; j < H; ++j) dhidden[rows_[k] * H + j] = dx[b * H + j] * weights_[k];
      }
    }
  }

 private:
  // The classifier or tied decoder and the loss: d t into dt_, the output's gradients into ps.G.
  void output_backward(const HeadPass& ps) {
    const HeadOffsets& o = ps.layout->head;
    const int64_t H = ps.H, C = o.out_features;
    dlogits_.resize(M_ * C);
    float* dl = dlogits_.f.data();
    switch (loss_) {
      case Loss::mse:
        kernels::mse_loss_backward(dl, logits_.data(), ftargets_.data(), M_ * C, ps.loss_scale);
        break;
      case Loss::bce:
        kernels::bce_with_logits_backward(dl, logits_.data(), ftargets_.data(), M_ * C, ps.loss_scale);
        break;
      case Loss::cross_entropy:
        kernels::cross_entropy_backward(dl, logits_.data(), lse_.data(), targets_.data(), ce_rows_,
                                        ce_classes_, ce_classes_, 1, -100, ps.loss_scale);
        break;
      case Loss::none:
        fail("model backward: the last forward had no labels, so there is no loss");
    }
    dlogits_.sync(ps.dt);
    const int64_t out_w = kind_ == HeadKind::masked_lm ? ps.layout->word_emb : o.out_w;
    linear_backward_input(dt_.f.data(), dlogits_.mm(ps.dt), ps.weight(out_w), M_, H, C, ps.dt);
    linear_backward_params(ps.G + out_w, ps.G + o.out_b, dl, dlogits_.mm(ps.dt), t_.mm(ps.dt), M_, H, C,
                           ps.dt, true);
  }

  // classifier_dropout before the classifier (the MLM head has none): per feature row (sequence
  // classification) or per token row in the padded layout's counters (token classification).
  void drop(const HeadPass& ps, float* v) const {
    // A config built in code may leave classifier_dropout null (-1): ModernBertConfig's default is 0.
    const double p = std::max(0.0, ps.config->classifier_dropout);
    if (pooled())
      apply_dropout(v, nullptr, v, M_ * ps.H, ps.site(p, 0, ps.H));
    else if (kind_ == HeadKind::token_classification || kind_ == HeadKind::span)
      apply_dropout_rows(v, nullptr, v, ps.N, ps.H, ps.T, *ps.cu, ps.site(p, 0, ps.T * ps.H));
  }

  float loss(const ModelConfig& c, const Batch& batch, int64_t C) {
    ce_rows_ = M_;
    ce_classes_ = C;
    if (kind_ == HeadKind::multiple_choice) {  // one logit per choice, cross-entropy over each example's
      CT_CHECK(batch.num_choices > 0 && M_ % batch.num_choices == 0, "multiple choice: batch of ", M_,
               " rows is not examples x num_choices (", batch.num_choices, ")");
      if (!batch.labels) return std::numeric_limits<float>::quiet_NaN();
      loss_ = Loss::cross_entropy;
      ce_rows_ = M_ / batch.num_choices;
      ce_classes_ = batch.num_choices;
      targets_.assign(batch.labels, batch.labels + ce_rows_);
      lse_.resize(ce_rows_);
      return kernels::cross_entropy_forward(lse_.data(), logits_.data(), targets_.data(), ce_rows_,
                                            ce_classes_, ce_classes_, 1, -100);
    }
    if (kind_ == HeadKind::sequence_classification) {
      if (!batch.labels && !batch.float_labels) return std::numeric_limits<float>::quiet_NaN();
      std::string pt = c.problem_type;
      if (pt.empty())
        pt = C == 1 ? "regression"
                    : (batch.labels ? "single_label_classification" : "multi_label_classification");
      if (pt == "regression") {
        loss_ = Loss::mse;
        ftargets_.resize(static_cast<size_t>(M_ * C));
        for (int64_t i = 0; i < M_ * C; ++i)
          ftargets_[i] = batch.float_labels ? batch.float_labels[i] : static_cast<float>(batch.labels[i]);
        return kernels::mse_loss_forward(logits_.data(), ftargets_.data(), M_ * C);
      }
      if (pt == "single_label_classification") {
        CT_CHECK(batch.labels, "sequence classification: problem_type ", pt, " needs integer labels");
        loss_ = Loss::cross_entropy;
        targets_.assign(batch.labels, batch.labels + M_);
        lse_.resize(M_);
        return kernels::cross_entropy_forward(lse_.data(), logits_.data(), targets_.data(), M_, C, C, 1,
                                              -100);
      }
      CT_CHECK(batch.float_labels, "sequence classification: problem_type ", pt,
               " needs float (multi-hot) labels [B, num_labels]");
      loss_ = Loss::bce;
      ftargets_.assign(batch.float_labels, batch.float_labels + M_ * C);
      return kernels::bce_with_logits_forward(logits_.data(), ftargets_.data(), M_ * C);
    }
    if (!batch.labels) return std::numeric_limits<float>::quiet_NaN();
    loss_ = Loss::cross_entropy;
    for (int64_t r : rows_) targets_.push_back(batch.labels[r]);
    lse_.resize(M_);
    return kernels::cross_entropy_forward(lse_.data(), logits_.data(), targets_.data(), M_, C, C, 1, -100);
  }

  // Heads on one pooled row per feature.
  bool pooled() const {
    return kind_ == HeadKind::sequence_classification || kind_ == HeadKind::multiple_choice;
  }

  HeadKind kind_;
  int64_t ce_rows_ = 0, ce_classes_ = 0;  // the cross-entropy's rows and classes (multiple choice: examples)
  std::unique_ptr<Head> span_;  // question answering: the span head over the prediction head's output
  kernels::Activation act_ = kernels::Activation::gelu;
  int64_t M_ = 0;               // rows the prediction head ran on
  std::vector<int64_t> rows_;   // their hidden-state rows (mean pooling: the pooled tokens)
  std::vector<float> weights_;  // mean pooling: 1 / the feature's token count, per pooled token
  HeadTensor x_, z_, a_, t_, dlogits_, dt_, da_, dz_, dx_;
  std::vector<float> logits_, lse_, ftargets_, mean_, rstd_;
  std::vector<int64_t> targets_;
  Loss loss_ = Loss::none;
};

}  // namespace

std::unique_ptr<Head> make_modernbert_head(HeadKind head) {
  return std::make_unique<ModernBertHead>(head);
}

}  // namespace ct::model

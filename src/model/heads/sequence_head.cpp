// Heads on each sequence's first token: sequence classification and multiple choice. The families differ
// only in where dropout sits and which activation follows the dense layer:
//   BERT (and RoBERTa's multiple choice): pooler.dense -> tanh -> dropout -> classifier
//   DistilBERT: pre_classifier -> ReLU -> dropout(seq_classif_dropout) -> classifier
//   RoBERTa / XLM-R / CamemBERT: dropout -> classifier.dense -> tanh -> dropout -> classifier.out_proj
//   ELECTRA: the same with GELU
//   ELECTRA's multiple choice (SequenceSummary): dropout(summary_first_dropout) ->
//     sequence_summary.summary -> summary_activation -> dropout(summary_last_dropout) -> classifier
// Sequence classification's loss follows problem_type as transformers picks it (one label: MSE; integer
// labels: cross-entropy; float labels: BCE with logits); multiple choice is one logit per choice and
// cross-entropy over each example's choices. DeBERTa-v2's ContextPooler: dropout(pooler_dropout) ->
// pooler.dense -> pooler_hidden_act -> dropout(cls_dropout) -> classifier.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "kernels/activation.h"
#include "kernels/bce_with_logits.h"
#include "kernels/cross_entropy.h"
#include "kernels/linear.h"
#include "kernels/mse_loss.h"
#include "model/head.h"
#include "model/model_ops.h"

namespace ct::model {
namespace {

enum class Loss { none, mse, cross_entropy, bce, soft_cross_entropy };

class SequenceHead final : public Head {
 public:
  explicit SequenceHead(HeadKind kind) : kind_(kind) {}

  float forward(const HeadPass& ps, const Batch& batch, const void* hidden, const float*) override {
    const ModelConfig& c = *ps.config;
    const HeadOffsets& o = ps.layout->head;
    const int64_t B = ps.B, H = ps.H, C = o.out_features;
    const bool mc = kind_ == HeadKind::multiple_choice;
    plan(c);
    // Each sequence's first token, in f32 (exact from bf16).
    x_.resize(B * H);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t r = ps.first_row(b);
      if (ps.dt == DType::bf16)
        bf16_to_f32(static_cast<const bf16*>(hidden) + r * H, x_.f.data() + b * H, H);
      else
        copy_f32(x_.f.data() + b * H, static_cast<const float*>(hidden) + r * H, H);
    }
    apply_dropout(x_.f.data(), nullptr, x_.f.data(), B * H, ps.site(p_pre_, 0, H));
    x_.sync(ps.dt);
    z_.resize(B * H);
    kernels::linear_forward(z_.f.data(), DType::f32, x_.mm(ps.dt), ps.weight(o.dense_w), ps.P + o.dense_b, B,
                            H, H, ps.dt);
    a_.resize(B * H);
    kernels::activation_forward(a_.f.data(), nullptr, z_.f.data(), B * H, act_);
    apply_dropout(a_.f.data(), nullptr, a_.f.data(), B * H, ps.site(p_post_, 1, H));
    a_.sync(ps.dt);
    logits_.resize(static_cast<size_t>(B * C));
    kernels::linear_forward(logits_.data(), DType::f32, a_.mm(ps.dt), ps.weight(o.out_w), ps.P + o.out_b, B,
                            H, C, ps.dt);

    loss_ = Loss::none;
    if (mc) {
      CT_CHECK(batch.num_choices > 0 && B % batch.num_choices == 0, "multiple choice: batch of ", B,
               " rows is not examples x num_choices (", batch.num_choices, ")");
      if (!batch.labels) return std::numeric_limits<float>::quiet_NaN();
      const int64_t E = B / batch.num_choices;
      targets_.assign(batch.labels, batch.labels + E);
      lse_.resize(E);
      loss_ = Loss::cross_entropy;
      rows_ = E;
      classes_ = batch.num_choices;
      return kernels::cross_entropy_forward(lse_.data(), logits_.data(), targets_.data(), E, classes_,
                                            classes_, 1, -100);
    }
    if (!batch.labels && !batch.float_labels) return std::numeric_limits<float>::quiet_NaN();
    // transformers' choice when problem_type is unset.
    std::string pt = c.problem_type;
    if (pt.empty())
      pt = C == 1 ? "regression"
                  : (batch.labels ? "single_label_classification" : "multi_label_classification");
    rows_ = B;
    classes_ = C;
    if (pt == "regression") {
      loss_ = Loss::mse;
      ftargets_.resize(static_cast<size_t>(B * C));
      for (int64_t i = 0; i < B * C; ++i)
        ftargets_[i] = batch.float_labels ? batch.float_labels[i] : static_cast<float>(batch.labels[i]);
      return kernels::mse_loss_forward(logits_.data(), ftargets_.data(), B * C);
    }
    if (c.is_deberta() && c.problem_type.empty() && !batch.labels) return soft_cross_entropy(ps, batch);
    if (pt == "single_label_classification") {
      CT_CHECK(batch.labels, "sequence classification: problem_type ", pt, " needs integer labels");
      loss_ = Loss::cross_entropy;
      targets_.assign(batch.labels, batch.labels + B);
      // DebertaV2ForSequenceClassification (problem_type unset) leaves out every negative label, not just
      // -100.
      if (c.is_deberta() && c.problem_type.empty())
        for (auto& t : targets_) t = t < 0 ? -100 : t;
      lse_.resize(B);
      return kernels::cross_entropy_forward(lse_.data(), logits_.data(), targets_.data(), B, C, C, 1, -100);
    }
    CT_CHECK(batch.float_labels, "sequence classification: problem_type ", pt,
             " needs float (multi-hot) labels [B, num_labels]");
    loss_ = Loss::bce;
    ftargets_.assign(batch.float_labels, batch.float_labels + B * C);
    return kernels::bce_with_logits_forward(logits_.data(), ftargets_.data(), B * C);
  }

  const std::vector<float>& logits() const override { return logits_; }
  bool has_loss() const override { return loss_ != Loss::none; }

  bool rows_read(const HeadPass& ps, const Batch&, std::vector<int64_t>& rows) const override {
    rows.clear();
    for (int64_t b = 0; b < ps.B; ++b) rows.push_back(ps.first_row(b));
    return true;
  }

  void backward(const HeadPass& ps, float* dhidden) override {
    const HeadOffsets& o = ps.layout->head;
    const int64_t B = ps.B, H = ps.H, C = o.out_features;
    dlogits_.resize(B * C);
    float* dl = dlogits_.f.data();
    switch (loss_) {
      case Loss::mse:
        kernels::mse_loss_backward(dl, logits_.data(), ftargets_.data(), B * C, ps.loss_scale);
        break;
      case Loss::bce:
        kernels::bce_with_logits_backward(dl, logits_.data(), ftargets_.data(), B * C, ps.loss_scale);
        break;
      case Loss::cross_entropy:
        kernels::cross_entropy_backward(dl, logits_.data(), lse_.data(), targets_.data(), rows_, classes_,
                                        classes_, 1, -100, ps.loss_scale);
        break;
      case Loss::soft_cross_entropy:  // d/dz of -sum_c y_c log softmax(z)_c = softmax(z) sum_c y_c - y
        for (int64_t b = 0; b < B; ++b) {
          double ysum = 0;
          for (int64_t k = 0; k < C; ++k) ysum += ftargets_[b * C + k];
          for (int64_t k = 0; k < C; ++k)
            dl[b * C + k] = static_cast<float>(
                (std::exp(static_cast<double>(logits_[b * C + k]) - lse_[b]) * ysum - ftargets_[b * C + k]) *
                ps.loss_scale / static_cast<double>(B));
        }
        break;
      case Loss::none:
        fail("model backward: the last forward had no labels, so there is no loss");
    }
    dlogits_.sync(ps.dt);
    // out: d a = dlogits W_out; parameters.
    da_.resize(B * H);
    linear_backward_input(da_.f.data(), dlogits_.mm(ps.dt), ps.weight(o.out_w), B, H, C, ps.dt);
    linear_backward_params(ps.G + o.out_w, ps.G + o.out_b, dl, dlogits_.mm(ps.dt), a_.mm(ps.dt), B, H, C,
                           ps.dt, true);
    apply_dropout(da_.f.data(), nullptr, da_.f.data(), B * H, ps.site(p_post_, 1, H));
    dz_.resize(B * H);
    kernels::activation_backward(dz_.f.data(), da_.f.data(), z_.f.data(), B * H, act_, false);
    dz_.sync(ps.dt);
    dx_.resize(B * H);
    linear_backward_input(dx_.f.data(), dz_.mm(ps.dt), ps.weight(o.dense_w), B, H, H, ps.dt);
    linear_backward_params(ps.G + o.dense_w, ps.G + o.dense_b, dz_.f.data(), dz_.mm(ps.dt), x_.mm(ps.dt), B,
                           H, H, ps.dt, true);
    apply_dropout(dx_.f.data(), nullptr, dx_.f.data(), B * H, ps.site(p_pre_, 0, H));
    zero_f32(dhidden, ps.N * H);
    for (int64_t b = 0; b < B; ++b) copy_f32(dhidden + ps.first_row(b) * H, dx_.f.data() + b * H, H);
  }

 private:
  void plan(const ModelConfig& c) {
    const bool mc = kind_ == HeadKind::multiple_choice;
    if (c.is_deberta()) {  // ContextPooler: dropout, dense, pooler_hidden_act; then cls_dropout
      act_ = kernels::activation_from_name(c.pooler_hidden_act);
      p_pre_ = c.pooler_dropout;
      p_post_ = c.classifier_dropout_or_hidden();
    } else if (c.is_distilbert()) {
      act_ = kernels::Activation::relu;
      p_pre_ = 0.0;
      p_post_ = c.seq_classif_dropout;
    } else if (mc && c.is_electra()) {  // SequenceSummary (checked by make_param_layout)
      act_ = c.summary_activation == "tanh" ? kernels::Activation::tanh
                                            : kernels::activation_from_name(c.summary_activation);
      p_pre_ = c.summary_first_dropout;
      p_post_ = c.summary_last_dropout;
    } else if (!mc && (c.is_roberta_like() || c.is_electra())) {
      act_ = c.is_electra() ? kernels::Activation::gelu : kernels::Activation::tanh;
      p_pre_ = p_post_ = c.classifier_dropout_or_hidden();
    } else {
      act_ = kernels::Activation::tanh;  // the pooler
      p_pre_ = 0.0;
      // RobertaForMultipleChoice drops out with hidden_dropout_prob; BERT's heads with classifier_dropout.
      p_post_ = c.is_roberta_like() ? c.hidden_dropout_prob : c.classifier_dropout_or_hidden();
    }
  }

  // DebertaV2ForSequenceClassification with float labels [B, num_labels] and no problem_type: cross-entropy
  // against the labels as a distribution, -mean_b sum_c y_bc log softmax(z_b)_c (not BCE).
  float soft_cross_entropy(const HeadPass& ps, const Batch& batch) {
    const int64_t B = ps.B, C = ps.layout->head.out_features;
    loss_ = Loss::soft_cross_entropy;
    ftargets_.assign(batch.float_labels, batch.float_labels + B * C);
    lse_.resize(B);
    double total = 0;
    for (int64_t b = 0; b < B; ++b) {
      const float* z = logits_.data() + b * C;
      double mx = z[0], s = 0;
      for (int64_t k = 1; k < C; ++k) mx = std::max(mx, static_cast<double>(z[k]));
      for (int64_t k = 0; k < C; ++k) s += std::exp(static_cast<double>(z[k]) - mx);
      const double lse = mx + std::log(s);
      lse_[b] = static_cast<float>(lse);
      for (int64_t k = 0; k < C; ++k) total -= ftargets_[b * C + k] * (static_cast<double>(z[k]) - lse);
    }
    return static_cast<float>(total / static_cast<double>(B));
  }

  HeadKind kind_;
  kernels::Activation act_ = kernels::Activation::tanh;
  double p_pre_ = 0.0, p_post_ = 0.0;
  HeadTensor x_, z_, a_, dlogits_, da_, dz_, dx_;
  std::vector<float> logits_, lse_, ftargets_;
  std::vector<int64_t> targets_;
  int64_t rows_ = 0, classes_ = 0;
  Loss loss_ = Loss::none;
};

}  // namespace

std::unique_ptr<Head> make_sequence_head(HeadKind kind) {
  return std::make_unique<SequenceHead>(kind);
}

}  // namespace ct::model

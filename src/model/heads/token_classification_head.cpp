// Token classification (run_ner's head, every family): dropout, then a Linear per token; cross-entropy over
// the tokens whose label is not -100 (special tokens, later sub-words, padding).
#include <limits>

#include "core/error.h"
#include "kernels/cross_entropy.h"
#include "kernels/linear.h"
#include "model/head.h"
#include "model/model_ops.h"

namespace ct::model {
namespace {

class TokenClassificationHead final : public Head {
 public:
  float forward(const HeadPass& ps, const Batch& batch, const void*, const float* hidden_f32) override {
    const int64_t N = ps.N, H = ps.H, C = ps.layout->head.out_features;
    x_.resize(N * H);
    apply_dropout_rows(x_.f.data(), ps.dt == DType::bf16 ? x_.b.data() : nullptr, hidden_f32, N, H, ps.T,
                       *ps.cu, site(ps));
    logits_.resize(static_cast<size_t>(N * C));
    kernels::linear_forward(logits_.data(), DType::f32, x_.mm(ps.dt), ps.weight(ps.layout->head.out_w),
                            ps.P + ps.layout->head.out_b, N, H, C, ps.dt);
    have_loss_ = batch.labels != nullptr;
    if (!have_loss_) return std::numeric_limits<float>::quiet_NaN();
    targets_.assign(batch.labels, batch.labels + N);
    lse_.resize(N);
    return kernels::cross_entropy_forward(lse_.data(), logits_.data(), targets_.data(), N, C, C, 1, -100);
  }

  const std::vector<float>& logits() const override { return logits_; }
  bool has_loss() const override { return have_loss_; }

  void backward(const HeadPass& ps, float* dhidden) override {
    const HeadOffsets& o = ps.layout->head;
    const int64_t N = ps.N, H = ps.H, C = o.out_features;
    dlogits_.resize(N * C);
    kernels::cross_entropy_backward(dlogits_.f.data(), logits_.data(), lse_.data(), targets_.data(), N, C, C,
                                    1, -100, ps.loss_scale);
    dlogits_.sync(ps.dt);
    linear_backward_input(dhidden, dlogits_.mm(ps.dt), ps.weight(o.out_w), N, H, C, ps.dt);
    linear_backward_params(ps.G + o.out_w, ps.G + o.out_b, dlogits_.f.data(), dlogits_.mm(ps.dt),
                           x_.mm(ps.dt), N, H, C, ps.dt, true);
    apply_dropout_rows(dhidden, nullptr, dhidden, N, H, ps.T, *ps.cu, site(ps));
  }

 private:
  // DistilBertForTokenClassification drops out with config.dropout, DeBERTa's with hidden_dropout_prob (its
  // classifier_dropout here is cls_dropout, the pooler heads'); the others with classifier_dropout.
  kernels::DropoutSite site(const HeadPass& ps) const {
    const ModelConfig& c = *ps.config;
    return ps.site(
        c.is_distilbert() || c.is_deberta() ? c.hidden_dropout_prob : c.classifier_dropout_or_hidden(), 0,
        ps.T * ps.H);
  }

  HeadTensor x_, dlogits_;
  std::vector<float> logits_, lse_;
  std::vector<int64_t> targets_;
  bool have_loss_ = false;
};

}  // namespace

std::unique_ptr<Head> make_token_classification_head() {
  return std::make_unique<TokenClassificationHead>();
}

}  // namespace ct::model

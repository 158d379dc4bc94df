// The QA span head (BertForQuestionAnswering's qa_outputs, every family; DistilBERT drops out the final
// hidden state first): start/end logits per token and HF's loss, the mean of the start and end
// cross-entropies with positions outside the window ignored.
#include <algorithm>
#include <limits>

#include "kernels/cross_entropy.h"
#include "kernels/linear.h"
#include "model/head.h"
#include "model/model_ops.h"

namespace ct::model {
namespace {

class SpanHead final : public Head {
 public:
  float forward(const HeadPass& ps, const Batch& batch, const void* hidden,
                const float* hidden_f32) override {
    const int64_t B = ps.B, T = ps.T, N = ps.N, H = ps.H;
    const HeadOffsets& o = ps.layout->head;
    in_ = hidden;
    if (ps.config->is_distilbert()) {
      dropped_.resize(N * H);
      apply_dropout_rows(dropped_.f.data(), ps.dt == DType::bf16 ? dropped_.b.data() : nullptr, hidden_f32, N,
                         H, T, *ps.cu, site(ps));
      in_ = dropped_.mm(ps.dt);
    }
    logits_.resize(static_cast<size_t>(N * 2));
    kernels::linear_forward(logits_.data(), DType::f32, in_, ps.weight(o.out_w), ps.P + o.out_b, N, H, 2,
                            ps.dt);

    have_loss_ = batch.start_positions != nullptr;
    if (!have_loss_) return std::numeric_limits<float>::quiet_NaN();
    lse_s_.resize(B);
    lse_e_.resize(B);
    start_t_.resize(B);
    end_t_.resize(B);
    if (ps.packed()) {
      // Each sequence's softmax spans its own positions; its length is its ignored index.
      double sum_s = 0, sum_e = 0;
      count_s_ = count_e_ = 0;
      for (int64_t b = 0; b < B; ++b) {
        const int64_t r0 = (*ps.cu)[b], len = (*ps.cu)[b + 1] - r0;
        start_t_[b] = std::clamp<int64_t>(batch.start_positions[b], 0, len);
        end_t_[b] = std::clamp<int64_t>(batch.end_positions[b], 0, len);
        const float ls = kernels::cross_entropy_forward(&lse_s_[b], logits_.data() + 2 * r0, &start_t_[b], 1,
                                                        len, 2 * len, 2, len);
        const float le = kernels::cross_entropy_forward(&lse_e_[b], logits_.data() + 2 * r0 + 1, &end_t_[b],
                                                        1, len, 2 * len, 2, len);
        if (start_t_[b] != len) sum_s += ls, ++count_s_;
        if (end_t_[b] != len) sum_e += le, ++count_e_;
      }
      const float nan = std::numeric_limits<float>::quiet_NaN();
      const float ls = count_s_ ? static_cast<float>(sum_s / static_cast<double>(count_s_)) : nan;
      const float le = count_e_ ? static_cast<float>(sum_e / static_cast<double>(count_e_)) : nan;
      return 0.5f * (ls + le);
    }
    // HF: positions outside the window clamp to T, which is the ignored index.
    for (int64_t b = 0; b < B; ++b) {
      start_t_[b] = std::clamp<int64_t>(batch.start_positions[b], 0, T);
      end_t_[b] = std::clamp<int64_t>(batch.end_positions[b], 0, T);
    }
    const float ls =
        kernels::cross_entropy_forward(lse_s_.data(), logits_.data(), start_t_.data(), B, T, 2 * T, 2, T);
    const float le =
        kernels::cross_entropy_forward(lse_e_.data(), logits_.data() + 1, end_t_.data(), B, T, 2 * T, 2, T);
    return 0.5f * (ls + le);
  }

  const std::vector<float>& logits() const override { return logits_; }
  bool has_loss() const override { return have_loss_; }

  void backward(const HeadPass& ps, float* dhidden) override {
    const int64_t B = ps.B, T = ps.T, N = ps.N, H = ps.H;
    const HeadOffsets& o = ps.layout->head;
    const float scale = ps.loss_scale;
    dlogits_.resize(N * 2);
    if (ps.packed()) {
      // d(mean over counted sequences): each counted sequence gets 1/count of it (the kernel's own count is
      // 1); with nothing counted every sequence is differentiated as torch does a 0/0 mean (NaN).
      for (int64_t b = 0; b < B; ++b) {
        const int64_t r0 = (*ps.cu)[b], len = (*ps.cu)[b + 1] - r0;
        const int64_t* tg[2] = {&start_t_[b], &end_t_[b]};
        const float* lse[2] = {&lse_s_[b], &lse_e_[b]};
        const int64_t count[2] = {count_s_, count_e_};
        for (int k = 0; k < 2; ++k) {
          if (*tg[k] == len && count[k]) continue;
          const float d = count[k] ? 0.5f * scale / static_cast<float>(count[k]) : 0.5f * scale;
          kernels::cross_entropy_backward(dlogits_.f.data() + 2 * r0 + k, logits_.data() + 2 * r0 + k, lse[k],
                                          tg[k], 1, len, 2 * len, 2, len, d);
        }
      }
    } else {
      kernels::cross_entropy_backward(dlogits_.f.data(), logits_.data(), lse_s_.data(), start_t_.data(), B, T,
                                      2 * T, 2, T, 0.5f * scale);
      kernels::cross_entropy_backward(dlogits_.f.data() + 1, logits_.data() + 1, lse_e_.data(), end_t_.data(),
                                      B, T, 2 * T, 2, T, 0.5f * scale);
    }
    dlogits_.sync(ps.dt);
    linear_backward_input(dhidden, dlogits_.mm(ps.dt), ps.weight(o.out_w), N, H, 2, ps.dt);
    linear_backward_params(ps.G + o.out_w, ps.G + o.out_b, dlogits_.f.data(), dlogits_.mm(ps.dt), in_, N, H,
                           2, ps.dt, /*accumulate=*/true);
    if (ps.config->is_distilbert()) apply_dropout_rows(dhidden, nullptr, dhidden, N, H, T, *ps.cu, site(ps));
  }

 private:
  kernels::DropoutSite site(const HeadPass& ps) const {
    return ps.site(ps.config->qa_dropout, 0, ps.T * ps.H);
  }

  const void* in_ = nullptr;  // what qa_outputs read: the final hidden state or its dropout
  HeadTensor dropped_, dlogits_;
  std::vector<float> logits_, lse_s_, lse_e_;
  std::vector<int64_t> start_t_, end_t_;
  int64_t count_s_ = 0, count_e_ = 0;
  bool have_loss_ = false;
};

}  // namespace

std::unique_ptr<Head> make_span_head() {
  return std::make_unique<SpanHead>();
}

}  // namespace ct::model

// QaModel, for the model tests: the encoder body with the span head (BertForQuestionAnswering and its
// counterparts in every family) and a forward that hands back start and end logits apart, as the golden
// fixtures hold them. The trainer and `coretrain qa` use EncoderModel with HeadKind::span, as every task
// does.
#pragma once

#include <cstdint>
#include <vector>

#include "model/encoder_model.h"

namespace ct::model {

class QaModel : public EncoderModel {
 public:
  QaModel(const ModelConfig& config, Precision precision, float* grad_slab = nullptr)
      : EncoderModel(config, HeadKind::span, precision, grad_slab) {}

  // Runs the model; writes start/end logits [B, T] ([N] packed; either may be null) and returns HF's QA loss,
  // or NaN when the batch has no positions. Activations are kept for backward().
  float forward(const Batch& batch, const StepOptions& options, float* start_logits, float* end_logits) {
    const float loss = EncoderModel::forward(batch, options);
    const std::vector<float>& l = logits();  // [N, 2]: start, end per token
    const int64_t n = static_cast<int64_t>(l.size()) / 2;
    for (int64_t i = 0; i < n; ++i) {
      if (start_logits) start_logits[i] = l[2 * i];
      if (end_logits) end_logits[i] = l[2 * i + 1];
    }
    return loss;
  }
};

}  // namespace ct::model

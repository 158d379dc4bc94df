// QaModel: the encoder body with the span head (BertForQuestionAnswering and its counterparts in every
// family), with the QA-shaped forward run_qa's trainer calls: start and end logits apart.
#pragma once

#include "model/encoder_model.h"

namespace ct::model {

class QaModel : public EncoderModel {
 public:
  QaModel(const ModelConfig& config, Precision precision, float* grad_slab = nullptr)
      : EncoderModel(config, HeadKind::span, precision, grad_slab) {}

  // Runs the model; writes start/end logits [B, T] ([N] packed; either may be null) and returns HF's QA loss,
  // or NaN when the batch has no positions. Activations are kept for backward().
  float forward(const Batch& batch, const StepOptions& options, float* start_logits, float* end_logits);
};

}  // namespace ct::model

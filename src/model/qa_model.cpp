#include "model/qa_model.h"

namespace ct::model {

float QaModel::forward(const Batch& batch, const StepOptions& options, float* start_logits,
                       float* end_logits) {
  const float loss = EncoderModel::forward(batch, options);
  const std::vector<float>& l = logits();  // [N, 2]: start, end per token
  const int64_t n = static_cast<int64_t>(l.size()) / 2;
  for (int64_t i = 0; i < n; ++i) {
    if (start_logits) start_logits[i] = l[2 * i];
    if (end_logits) end_logits[i] = l[2 * i + 1];
  }
  return loss;
}

}  // namespace ct::model

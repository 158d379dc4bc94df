// MSE over a head's few logits (B or B x labels values): plain loops, double sums.
#include "kernels/mse_loss.h"

namespace ct::kernels {

float mse_loss_forward(const float* pred, const float* target, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(pred[i]) - target[i];
    s += d * d;
  }
  return static_cast<float>(s / static_cast<double>(n));  // n == 0: NaN, as torch's empty mean
}

void mse_loss_backward(float* dpred, const float* pred, const float* target, int64_t n, float dloss) {
  const float scale = 2.0f * dloss / static_cast<float>(n);
  for (int64_t i = 0; i < n; ++i) dpred[i] += scale * (pred[i] - target[i]);
}

double mse_loss_reference(const float* pred, const float* target, int64_t n) {
  long double s = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const long double d = static_cast<long double>(pred[i]) - target[i];
    s += d * d;
  }
  return static_cast<double>(s / n);
}

}  // namespace ct::kernels

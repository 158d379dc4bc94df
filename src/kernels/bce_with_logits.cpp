// BCE with logits over a head's few logits: plain loops, double sums.
#include "kernels/bce_with_logits.h"

#include <cmath>

namespace ct::kernels {

float bce_with_logits_forward(const float* logits, const float* target, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = logits[i], y = target[i];
    s += std::fmax(x, 0.0) - x * y + std::log1p(std::exp(-std::fabs(x)));
  }
  return static_cast<float>(s / static_cast<double>(n));
}

void bce_with_logits_backward(float* dlogits, const float* logits, const float* target, int64_t n,
                              float dloss) {
  const double scale = static_cast<double>(dloss) / static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) {
    const double sig = 1.0 / (1.0 + std::exp(-static_cast<double>(logits[i])));
    dlogits[i] += static_cast<float>(scale * (sig - target[i]));
  }
}

double bce_with_logits_reference(const float* logits, const float* target, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double p = 1.0 / (1.0 + std::exp(-static_cast<double>(logits[i])));
    s -= target[i] * std::log(p) + (1.0 - target[i]) * std::log(1.0 - p);
  }
  return s / static_cast<double>(n);
}

}  // namespace ct::kernels

#include "model/flops.h"

#include <vector>

namespace ct::model {

double forward_matmul_flops(const ModelConfig& c, std::span<const int64_t> lengths) {
  const double H = static_cast<double>(c.hidden_size), I = static_cast<double>(c.intermediate_size);
  const double layers = static_cast<double>(c.num_hidden_layers);
  // Per token and layer: QKV (H x 3H), attention output (H x H), FFN in and out (H x I twice); the head 2H.
  const double per_token = layers * (2 * H * 3 * H + 2 * H * H + 2 * 2 * H * I) + 2 * H * 2;
  double total = 0;
  for (int64_t len : lengths) {
    const double L = static_cast<double>(len);
    total += per_token * L + layers * 2 * 2 * L * L * H;  // Q K^T and P V over the sequence's own keys
  }
  return total;
}

double forward_matmul_flops(const ModelConfig& c, int64_t B, int64_t T) {
  const std::vector<int64_t> lengths(static_cast<size_t>(B), T);
  return forward_matmul_flops(c, lengths);
}

}  // namespace ct::model

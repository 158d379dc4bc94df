#include "model/flops.h"

#include <algorithm>
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
  // DeBERTa: per layer, the relative embeddings through the key / query projection of each position term, and
  // per sequence Q Kr^T / K Qr^T over the band of relative rows its distances reach.
  const double terms = static_cast<double>(c.has_c2p()) + static_cast<double>(c.has_p2c());
  if (c.is_deberta() && terms > 0) {
    const double R = 2.0 * static_cast<double>(c.relative_span());
    total += layers * terms * 2 * R * H * H;
    for (int64_t len : lengths) {
      const double L = static_cast<double>(len);
      total += layers * terms * 2 * L * std::min(2 * L - 1, R) * H;
    }
  }
  return total;
}

double forward_matmul_flops(const ModelConfig& c, std::span<const int64_t> lengths, HeadKind head,
                            int64_t projected) {
  const double H = static_cast<double>(c.hidden_size), E = static_cast<double>(c.embedding_width());
  double tokens = 0;
  for (int64_t len : lengths) tokens += static_cast<double>(len);
  const double seqs = static_cast<double>(lengths.size());
  double total = forward_matmul_flops(c, lengths) - 2 * H * 2 * tokens;  // less the QA head
  if (c.projects_embeddings()) total += 2 * E * H * tokens;
  const double labels = static_cast<double>(c.num_labels);
  switch (head) {
    case HeadKind::span:
      total += 2 * H * 2 * tokens;
      break;
    case HeadKind::sequence_classification:
      total += seqs * (2 * H * H + 2 * H * labels);
      break;
    case HeadKind::multiple_choice:
      total += seqs * (2 * H * H + 2 * H);
      break;
    case HeadKind::token_classification:
      total += tokens * 2 * H * labels;
      break;
    case HeadKind::masked_lm: {
      const double W = c.is_electra() ? E : H;
      total += static_cast<double>(projected) * (2 * H * W + 2 * W * static_cast<double>(c.vocab_size));
      break;
    }
  }
  return total;
}

double forward_matmul_flops(const ModelConfig& c, int64_t B, int64_t T) {
  const std::vector<int64_t> lengths(static_cast<size_t>(B), T);
  return forward_matmul_flops(c, lengths);
}

}  // namespace ct::model

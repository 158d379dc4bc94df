#include "model/flops.h"

#include <algorithm>
#include <vector>

namespace ct::model {

double forward_matmul_flops(const ModelConfig& c, std::span<const int64_t> lengths) {
  const double H = static_cast<double>(c.hidden_size), I = static_cast<double>(c.intermediate_size);
  const double layers = static_cast<double>(c.num_hidden_layers);
  // Per token and layer: QKV (H x 3H), attention output (H x H), FFN in and out (H x I twice; ModernBERT's
  // GeGLU input projection is H x 2I); the head 2H.
  const double ffn = c.is_modernbert() ? 2 * H * 2 * I + 2 * I * H : 2 * 2 * H * I;
  const double per_token = layers * (2 * H * 3 * H + 2 * H * H + ffn) + 2 * H * 2;
  // ModernBERT's local layers attend over a band of local_attention / 2 keys each side (counted as the
  // band, not the blocks the kernel computes it in).
  double global_layers = layers, local_layers = 0;
  if (c.is_modernbert()) {
    global_layers = static_cast<double>((c.num_hidden_layers + c.global_attn_every_n_layers - 1) /
                                        c.global_attn_every_n_layers);
    local_layers = layers - global_layers;
  }
  double total = 0;
  for (int64_t len : lengths) {
    const double L = static_cast<double>(len);
    double band_keys = 0;  // sum over queries of the keys within the window
    if (local_layers > 0) {
      const int64_t w = c.local_attention / 2;
      for (int64_t i = 0; i < len; ++i)
        band_keys += static_cast<double>(std::min(len - 1, i + w) - std::max<int64_t>(0, i - w) + 1);
    }
    // Q K^T and P V over the sequence's own keys
    total += per_token * L + global_layers * 2 * 2 * L * L * H + local_layers * 2 * 2 * band_keys * H;
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

namespace {

// A head that reads only some rows: the encoder's last layer (BERT, RoBERTa, XLM-R, ELECTRA, DistilBERT;
// not DeBERTa or ModernBERT, whose bodies compute every row) computes queries, attention rows, output
// projection and FFN for those rows alone, keys and values for all, while they are at most half the rows
// (EncoderModel). What that leaves out, so that MFU counts the work the task needs. rows_in(b, L): the rows
// read in a sequence of L tokens.
template <class RowsIn>
double head_rows_savings(const ModelConfig& c, std::span<const int64_t> lengths, double rows,
                         RowsIn rows_in) {
  if (c.is_deberta() || c.is_modernbert() || c.num_hidden_layers < 1) return 0.0;
  double tokens = 0;
  for (int64_t len : lengths) tokens += static_cast<double>(len);
  if (rows <= 0 || 2 * rows > tokens) return 0.0;
  const double H = static_cast<double>(c.hidden_size), I = static_cast<double>(c.intermediate_size);
  double saved = (tokens - rows) * (2 * H * H + 2 * H * H + 2 * 2 * H * I);
  for (size_t b = 0; b < lengths.size(); ++b) {
    const double L = static_cast<double>(lengths[b]);
    saved += 2 * 2 * (L - rows_in(b, L)) * L * H;
  }
  return saved;
}

}  // namespace

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
      total -= head_rows_savings(c, lengths, seqs, [](size_t, double) { return 1.0; });
      break;
    case HeadKind::multiple_choice:
      total += seqs * (2 * H * H + 2 * H);
      total -= head_rows_savings(c, lengths, seqs, [](size_t, double) { return 1.0; });
      break;
    case HeadKind::token_classification:
      total += tokens * 2 * H * labels + (c.is_modernbert() ? tokens * 2 * H * H : 0.0);  // its head.dense
      break;
    case HeadKind::masked_lm: {
      const double W = c.is_electra() ? E : H;
      total += static_cast<double>(projected) * (2 * H * W + 2 * W * static_cast<double>(c.vocab_size));
      // Each sequence's share of the masked rows taken as proportional to its length (exact when the
      // lengths are equal, as in bench step).
      total -= head_rows_savings(c, lengths, static_cast<double>(projected), [&](size_t, double L) {
        return static_cast<double>(projected) * L / tokens;
      });
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

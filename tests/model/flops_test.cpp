// Model FLOPs: the per-token matmuls plus each sequence's attention over its own length.
#include "model/flops.h"

#include <gtest/gtest.h>

#include <vector>

namespace ct::model {
namespace {

TEST(Flops, BertBaseByHandAndRealTokensOnly) {
  ModelConfig c;
  c.hidden_size = 768;
  c.intermediate_size = 3072;
  c.num_hidden_layers = 12;
  c.num_attention_heads = 12;
  const double H = 768, I = 3072;
  const double per_token = 12 * (6 * H * H + 2 * H * H + 4 * H * I) + 4 * H;
  EXPECT_DOUBLE_EQ(forward_matmul_flops(c, 1, 384), per_token * 384 + 12 * 4 * 384.0 * 384.0 * H);
  const std::vector<int64_t> same = {384, 384};
  EXPECT_DOUBLE_EQ(forward_matmul_flops(c, same), forward_matmul_flops(c, 2, 384));
  // A 100-token sequence costs less than its padded 384 by more than the token ratio (attention is
  // quadratic).
  const std::vector<int64_t> short_one = {100};
  EXPECT_LT(forward_matmul_flops(c, short_one), forward_matmul_flops(c, 1, 384) * 100.0 / 384.0);
  EXPECT_DOUBLE_EQ(forward_matmul_flops(c, std::vector<int64_t>{}), 0.0);
}

// Other heads replace the QA head's 2 outputs per token with their own products; a masked LM counts its
// vocabulary projection on the projected tokens only.
TEST(Flops, HeadsCountTheirOwnMatmuls) {
  ModelConfig c;
  const double H = 768, V = 30522;
  const std::vector<int64_t> lens = {128, 100};
  const double qa = forward_matmul_flops(c, lens);
  EXPECT_DOUBLE_EQ(forward_matmul_flops(c, lens, HeadKind::span, 0), qa);
  const double body = qa - 2 * H * 2 * 228;
  // A masked LM: its 34 projected rows; the last layer computes those alone (each sequence's share taken
  // in proportion to its length).
  const double I = 3072;
  double mlm_skipped = (228 - 34) * (4 * H * H + 4 * H * I);
  for (double L : {128.0, 100.0}) mlm_skipped += 4 * (L - 34 * L / 228) * L * H;
  EXPECT_NEAR(forward_matmul_flops(c, lens, HeadKind::masked_lm, 34),
              body + 34 * (2 * H * H + 2 * H * V) - mlm_skipped, 1e-9 * body);
  // Above half the rows the body computes them all.
  EXPECT_DOUBLE_EQ(forward_matmul_flops(c, lens, HeadKind::masked_lm, 200),
                   body + 200 * (2 * H * H + 2 * H * V));
  // The last layer computes the first token's query, attention row, output projection and FFN only.
  double skipped = 0;
  for (double L : {128.0, 100.0}) skipped += (L - 1) * (4 * H * H + 4 * H * I) + 4 * (L - 1) * L * H;
  EXPECT_DOUBLE_EQ(forward_matmul_flops(c, lens, HeadKind::sequence_classification, 0),
                   body + 2 * (2 * H * H + 2 * H * 2) - skipped);
  EXPECT_DOUBLE_EQ(forward_matmul_flops(c, lens, HeadKind::multiple_choice, 0),
                   body + 2 * (2 * H * H + 2 * H) - skipped);
  ModelConfig d = c;  // DeBERTa's body computes every row
  d.model_type = "deberta-v2";
  const double deberta = forward_matmul_flops(d, lens) - 2 * H * 2 * 228 + 2 * (2 * H * H + 2 * H * 2);
  EXPECT_NEAR(forward_matmul_flops(d, lens, HeadKind::sequence_classification, 0), deberta, 1e-9 * deberta);
}

}  // namespace
}  // namespace ct::model

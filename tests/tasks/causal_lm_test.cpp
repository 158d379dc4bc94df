// run_clm.py's pipeline pieces against hand-computed expectations: group_texts per 1,000-text map batch (each
// batch's remainder dropped, run_clm's error for a batch shorter than a block), the block_size rule and its
// warnings, the text column rule, the shifted labels and compute_metrics' accuracy, the from-scratch Llama
// config (update_from_string leaves head_dim as __init__ resolved it), and the loss the decoder hands the
// Trainer (each micro-batch's mean over its targets; backward scaled by loss_scale / targets).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "model/causal_lm_model.h"
#include "model/decoder_io.h"
#include "tasks/causal_lm/causal_lm_split.h"
#include "tasks/causal_lm/clm_model.h"
#include "tasks/causal_lm/run_clm.h"
#include "tasks/group_texts.h"
#include "tasks/text_splits.h"

using testing::ElementsAre;
using testing::HasSubstr;

namespace {

std::vector<ct::tasks::TokenizedText> texts_of_length(int64_t n, int len) {
  std::vector<ct::tasks::TokenizedText> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    for (int k = 0; k < len; ++k) {
      out[static_cast<size_t>(i)].input_ids.push_back(static_cast<int32_t>(i * 10 + k));
      out[static_cast<size_t>(i)].special_tokens_mask.push_back(0);
    }
  return out;
}

}  // namespace

TEST(ClmGroupTexts, EachThousandTextBatchDropsItsOwnRemainder) {
  // 1,001 texts of 5 tokens, blocks of 3: batch 1 has 5,000 tokens -> 1,666 blocks (2 dropped), batch 2 has 5
  // -> 1 block (2 dropped). Concatenated whole it would be 5,005 / 3 = 1,668.
  const auto texts = texts_of_length(1001, 5);
  const auto blocks = ct::tasks::group_texts(texts, 3);
  ASSERT_EQ(1667u, blocks.size());
  // Block 1,666 starts at text 1,000's first token: nothing of batch 1 crosses into it.
  EXPECT_THAT(blocks[1666].input_ids, ElementsAre(10000, 10001, 10002));
  // The last block of batch 1 ends at text 999's third token (tokens 4,995..4,997 of the batch).
  EXPECT_THAT(blocks[1665].input_ids, ElementsAre(9990, 9991, 9992));
}

TEST(ClmGroupTexts, ABatchShorterThanABlockIsRunClmsError) {
  const auto texts = texts_of_length(1001, 5);  // the second batch holds 5 tokens
  ct::tasks::ShortBatchRule rule;
  rule.fail_flag = "--block_size";
  rule.source = "train.txt";
  EXPECT_NO_THROW(ct::tasks::group_texts(texts, 5, ct::tasks::kMapBatchSize, rule));
  try {
    ct::tasks::group_texts(texts, 6, ct::tasks::kMapBatchSize, rule);
    FAIL() << "no error";
  } catch (const ct::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--block_size: block_size of 6 is too big"));
    EXPECT_THAT(e.what(), HasSubstr("texts 1000-1000 of train.txt"));
  }
  // run_mlm's rule drops that batch instead.
  EXPECT_EQ(833u, ct::tasks::group_texts(texts, 6).size());
}

TEST(ClmBlockSize, RunClmsRule) {
  std::vector<std::string> w;
  // Unset: the tokenizer's model_max_length when the model has the positions.
  EXPECT_EQ(512, ct::tasks::clm_block_size(-1, 512, 2048, &w));
  EXPECT_TRUE(w.empty());
  // Unset, no limit (1e30) or beyond max_position_embeddings: min(1024, max positions), with HF's warning.
  EXPECT_EQ(1024, ct::tasks::clm_block_size(-1, 0, 2048, &w));
  ASSERT_EQ(1u, w.size());
  EXPECT_THAT(w[0], HasSubstr("Using block_size=1024 instead"));
  w.clear();
  EXPECT_EQ(128, ct::tasks::clm_block_size(-1, 131072, 128, &w));
  EXPECT_EQ(1u, w.size());
  w.clear();
  // Set: capped at model_max_length, with HF's warning.
  EXPECT_EQ(512, ct::tasks::clm_block_size(2000, 512, 4096, &w));
  ASSERT_EQ(1u, w.size());
  EXPECT_THAT(
      w[0], HasSubstr("The block_size passed (2000) is larger than the maximum length for the model (512)"));
  w.clear();
  EXPECT_EQ(100, ct::tasks::clm_block_size(100, 512, 64, &w));
  EXPECT_TRUE(w.empty());
  // A huge resolved size (Llama-3.2's 131,072) gets a plain warning too.
  EXPECT_EQ(131072, ct::tasks::clm_block_size(-1, 131072, 131072, &w));
  ASSERT_EQ(1u, w.size());
  EXPECT_THAT(w[0], HasSubstr("131072 tokens per block"));
}

TEST(ClmTextColumn, TextElseTheFirstColumn) {
  ct::data::DatasetTable t;
  t.table.names = {"id", "text"};
  EXPECT_EQ("text", ct::tasks::text_column_name(t));
  t.table.names = {"body", "title"};
  EXPECT_EQ("body", ct::tasks::text_column_name(t));
  t.table.names = {};
  EXPECT_THROW(ct::tasks::text_column_name(t), ct::Error);
}

TEST(ClmPercentSplit, TrainSlicesAsDatasetsRoundsThem) {
  ct::data::DatasetTable t;
  t.source = "train.txt";
  t.table.names = {"text"};
  t.table.columns.resize(1);
  for (int i = 0; i < 30; ++i) {
    ct::parquet::Value v;
    v.kind = ct::parquet::Value::Kind::String;
    v.s = std::to_string(i);
    t.table.columns[0].push_back(v);
  }
  t.table.num_rows = 30;
  // 5% of 30 = 1.5 -> 2 rows held out (round half to even).
  const int64_t k = ct::tasks::percent_boundary(5, 30);
  ASSERT_EQ(2, k);
  const auto v = ct::tasks::slice_rows(t, 0, k, "[:5%]");
  const auto tr = ct::tasks::slice_rows(t, k, 30, "[5%:]");
  EXPECT_EQ(2, v.num_rows());
  EXPECT_EQ(28, tr.num_rows());
  EXPECT_EQ("train.txt [5%:]", tr.source);
  EXPECT_EQ("2", ct::tasks::texts_of(tr, "text")[0]);
}

TEST(ClmSplit, LabelsAreTheNextTokenAndAccuracyIsRunClmsMetric) {
  const std::vector<std::vector<int32_t>> blocks = {{5, 6, 7, 8}, {9, 10, 11, 12}};
  ct::tasks::CausalLmSplit split(blocks, 4);
  const std::vector<int64_t> idx = {1, 0};
  const auto cb = split.collate(idx, /*labels=*/true);
  EXPECT_EQ(2, cb.batch.B);
  EXPECT_EQ(8, cb.positions);
  EXPECT_THAT(std::vector<int32_t>(cb.batch.labels, cb.batch.labels + 8),
              ElementsAre(10, 11, 12, -100, 6, 7, 8, -100));
  // predictions[:, :-1] against labels[:, 1:]: 6 positions, the last of each block not counted.
  const std::vector<float> rows = {6, 0, 8, 99, 10, 11, 0, 99};
  EXPECT_DOUBLE_EQ(4.0 / 6.0, split.score(rows, "eval", false, "").at("accuracy").get<double>());
}

TEST(ClmScratchConfig, LlamaDefaultsAndUpdateFromString) {
  const auto c = ct::tasks::scratch_decoder_config(
      "llama", "hidden_size=64,num_attention_heads=4,num_key_value_heads=2,vocab_size=100");
  EXPECT_EQ(64, c.hidden_size);
  EXPECT_EQ(100, c.vocab_size);
  EXPECT_EQ(2, c.num_kv_heads);
  EXPECT_EQ(128, c.head_dim);  // resolved by LlamaConfig.__init__ (4096 / 32), not by the override
  EXPECT_EQ(11008, c.intermediate_size);
  // num_key_value_heads too was resolved at __init__ (32): 4 query heads cannot share 32 kv heads, which
  // transformers' attention would meet as 0 groups; here it is the config's error.
  try {
    ct::tasks::scratch_decoder_config("llama", "hidden_size=64,num_attention_heads=4,vocab_size=100");
    FAIL() << "no error";
  } catch (const ct::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("is not a multiple of \"num_key_value_heads\" 32"));
  }
  try {
    ct::tasks::scratch_decoder_config("llama", "n_embd=8");
    FAIL() << "no error";
  } catch (const ct::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--config_overrides: key 'n_embd' is not a llama config field"));
  }
  EXPECT_THROW(ct::tasks::scratch_decoder_config("gpt2", ""), ct::Error);
}

TEST(ClmModel, LossIsTheBatchMeanAndBackwardScalesByLossScaleOverTargets) {
  const auto c = ct::tasks::scratch_decoder_config(
      "llama",
      "vocab_size=23,hidden_size=16,intermediate_size=32,num_hidden_layers=1,num_attention_heads=2,"
      "num_key_value_heads=1,head_dim=8");
  ct::model::CausalLmModel m(c, 8);
  ct::model::init_decoder_weights(m.decoder(), 3);
  const std::vector<std::vector<int32_t>> blocks = {{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}};
  ct::tasks::CausalLmSplit split(blocks, 5);
  const std::vector<int64_t> idx = {0, 1};
  const auto cb = split.collate(idx, true);
  const float scale = 0.75f;
  const float loss = m.forward_backward(cb.batch, {}, {}, scale, /*accumulate=*/false);
  const std::vector<float> g(m.grads_data(), m.grads_data() + m.num_params());

  // The decoder's own step over the same rows: nll summed over the 8 targets, gradient at scale / 8.
  ct::model::DecoderModel& d = m.decoder();
  ct::model::DecoderBatch b;
  const std::vector<int32_t> ids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, pos = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4};
  const std::vector<int32_t> tgt = {2, 3, 4, 5, -100, 7, 8, 9, 10, -100};
  b.rows = 10;
  b.input_ids = ids.data();
  b.position_ids = pos.data();
  b.seq_start = {0, 5};
  b.seq_len = {5, 5};
  b.targets = tgt.data();
  std::fill(d.grads().begin(), d.grads().end(), 0.0f);
  const auto sums = d.step(b, scale / 8.0f, true);
  EXPECT_FLOAT_EQ(static_cast<float>(sums.nll / 8.0), loss);
  for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], d.grads()[i]) << i;
  // accumulate=true adds; false overwrites.
  m.forward_backward(cb.batch, {}, {}, scale, true);
  EXPECT_FLOAT_EQ(2 * g[0], m.grads_data()[0]);
  // Evaluation: logits() is each token's argmax, -1 where no target.
  m.forward(cb.batch, {});
  ASSERT_EQ(10u, m.logits().size());
  EXPECT_EQ(-1.0f, m.logits()[4]);
  EXPECT_GE(m.logits()[0], 0.0f);
}

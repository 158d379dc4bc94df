// Masked LM through the Trainer: group_texts chunks of tokenized text, masks drawn per (epoch, position) at
// collation, and a tiny BERT with the tied decoder trained from random init on text whose every word follows
// from the rest of its line, scored by accuracy over the evaluation masks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <filesystem>

#include "core/error.h"
#include "core/rng.h"
#include "model/encoder_model.h"
#include "tasks/group_texts.h"
#include "tasks/masked_lm/masked_lm_split.h"
#include "text/hf_tokenizer.h"
#include "tiny_training.h"
#include "train/trainer.h"

namespace ct::tasks {
namespace {

// Long lines that repeat one word: a masked word is what the rest of its chunk says, but where a chunk
// straddles two lines (group_texts joins them) and the other line's word is near.
std::vector<TokenizedText> corpus(const text::HfTokenizer& tok, int lines, uint64_t seed) {
  static const char* cycle[] = {"hello", "world", "cafe", "zurich", "resume", "naive", "istanbul"};
  Generator g(seed);
  std::vector<TokenizedText> out;
  for (int i = 0; i < lines; ++i) {
    std::string line;
    const uint64_t word = g.below(7), len = 40 + g.below(20);
    for (uint64_t k = 0; k < len; ++k) line += std::string(k ? " " : "") + cycle[word];
    const text::Encoding e = tok.encode(line);
    out.push_back({e.ids, e.special_tokens_mask});
  }
  return out;
}

MaskedLmOptions options(const text::HfTokenizer& tok, bool pad) {
  MaskedLmOptions o;
  o.max_seq_length = 32;
  o.pad_to_max_length = pad;
  o.masking.mask_token_id = tok.token_to_id("[MASK]");
  o.masking.vocab_size = static_cast<int64_t>(tok.vocab_size());
  o.masking.seed = 42;
  return o;
}

TEST(MaskedLmSplit, MasksFollowTheBatchKeyAndLabelOnlyMaskedTokens) {
  auto tok = test::bert_tokenizer();
  const auto chunks = group_texts(corpus(tok, 40, 1), 32);
  const MaskedLmSplit split(chunks, options(tok, false));
  const std::vector<int64_t> idx{3, 5}, pos_a{10, 11}, pos_b{20, 21};
  auto labels_of = [&](uint64_t epoch, const std::vector<int64_t>& pos) {
    const auto b = split.collate(idx, true, train::BatchKey{epoch, pos});
    return std::vector<int32_t>(b.batch.labels, b.batch.labels + b.positions);
  };
  EXPECT_EQ(labels_of(0, pos_a), labels_of(0, pos_a));
  EXPECT_NE(labels_of(0, pos_a), labels_of(1, pos_a));  // a new epoch draws new masks
  EXPECT_NE(labels_of(0, pos_a), labels_of(0, pos_b));
  // Outside the Trainer: the evaluation masks keyed by feature index, as eval_masked gives them.
  const auto b = split.collate(idx, false);
  std::vector<int32_t> ids;
  std::vector<int64_t> labels;
  split.eval_masked(5, &ids, &labels);
  for (size_t t = 0; t < ids.size(); ++t) {
    EXPECT_EQ(ids[t], b.batch.input_ids[32 + t]);
    EXPECT_EQ(labels[t], b.batch.labels[32 + t]);
  }
}

TEST(MaskedLmSplit, RefusesChunksPastMaxSeqLengthAndKeysOfAnotherSize) {
  auto tok = test::bert_tokenizer();
  const auto chunks = group_texts(corpus(tok, 40, 1), 32);
  auto o = options(tok, false);
  o.max_seq_length = 16;
  EXPECT_THAT([&] { MaskedLmSplit(chunks, o); },
              testing::ThrowsMessage<Error>(
                  testing::HasSubstr("chunk 0 has 32 tokens, more than --max_seq_length 16")));
  const MaskedLmSplit split(chunks, options(tok, false));
  const std::vector<int64_t> idx{0, 1}, one_position{0};
  EXPECT_THAT(
      [&] {
        split.collate(idx, true, train::BatchKey{0, one_position});
      },
      testing::ThrowsMessage<Error>(testing::HasSubstr("masked LM: 1 positions for 2 features")));
}

class MlmTrainsThroughTheTrainer : public ::testing::TestWithParam<bool> {};

TEST_P(MlmTrainsThroughTheTrainer, ToHighMaskedAccuracy) {
  const bool pad = GetParam();
  omp_set_num_threads(1);  // a 32-wide model; see sequence_classification_test.cpp
  auto tok = test::bert_tokenizer();
  const auto train_chunks = group_texts(corpus(tok, 600, 2), 32),
             eval_chunks = group_texts(corpus(tok, 120, 3), 32);
  const MaskedLmSplit train_split(train_chunks, options(tok, pad)),
      eval_split(eval_chunks, options(tok, pad));

  const auto c = test::tiny_bert(static_cast<int64_t>(tok.vocab_size()));
  model::EncoderModel model(c, model::HeadKind::masked_lm, model::Precision::f32);
  model.init_weights(42);
  const train::TrainingArguments t =
      test::quick_args(std::string("mlm_") + (pad ? "padded" : "packed"), 300, 2e-3);
  train::Trainer trainer(t, model, nullptr);
  trainer.train(train_split, nullptr, "");
  const auto m = trainer.evaluate(eval_split, false);
  EXPECT_GT(m.value("eval_accuracy", 0.0), 0.8) << m.dump();
  ASSERT_TRUE(m.contains("eval_loss")) << m.dump();
  EXPECT_LT(m["eval_loss"].get<double>(), 1.0) << m.dump();
}

INSTANTIATE_TEST_SUITE_P(PaddedAndPacked, MlmTrainsThroughTheTrainer, ::testing::Bool());

}  // namespace
}  // namespace ct::tasks

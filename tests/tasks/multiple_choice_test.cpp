// Multiple choice (run_swag) through the Trainer: run_swag's rows from a tokenizer.json, padded and packed
// collation of examples x choices, run_swag's accuracy, and a tiny BERT trained from random init on a
// generated SWAG-like task (the right ending repeats a word of the context).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "model/encoder_model.h"
#include "tasks/multiple_choice/multiple_choice_features.h"
#include "tasks/multiple_choice/multiple_choice_split.h"
#include "tasks/multiple_choice/run_swag.h"
#include "text/hf_tokenizer.h"
#include "tiny_training.h"
#include "train/trainer.h"

namespace ct::tasks {
namespace {

// SWAG-like examples over the fixture's vocabulary: the context is "the <word>", every ending "the <word>" of
// a different word, and only the right ending repeats the context's, so a model must compare the two texts
// to choose.
std::vector<MultipleChoiceExample> generate(int n, uint64_t seed) {
  static const char* words[] = {"hello", "world", "cafe", "istanbul", "resume"};
  Generator g(seed);
  std::vector<MultipleChoiceExample> out;
  for (int i = 0; i < n; ++i) {
    std::vector<int> order{0, 1, 2, 3, 4};
    for (int k = 4; k > 0; --k) std::swap(order[k], order[g.below(static_cast<uint64_t>(k + 1))]);
    MultipleChoiceExample e;
    e.context = std::string("the ") + words[order[0]];
    e.header = "and";
    e.label = static_cast<int64_t>(g.below(4));
    int wrong = 1;
    for (int64_t c = 0; c < 4; ++c)
      e.endings.push_back(std::string("the ") + words[order[c == e.label ? 0 : wrong++]]);
    out.push_back(std::move(e));
  }
  return out;
}

TEST(MultipleChoiceFeatures, OnePairPerEndingWithTheHeaderTruncatedLongestFirst) {
  auto tok = test::bert_tokenizer();
  const std::vector<MultipleChoiceExample> examples{
      {"hello world", "and", {"the cafe", "the zurich", "the naive", "the resume"}, 2},
      {"hello world cafe istanbul resume naive zurich strasse", "the", {"cafe", "a", "b", "c"}, 0}};
  const auto f = build_multiple_choice_features(tok, examples, 10);
  ASSERT_EQ(2, f.size());
  ASSERT_EQ(8u, f.input_ids.size());
  EXPECT_EQ((std::vector<int64_t>{2, 0}), f.labels);
  EXPECT_FALSE(tok.truncation().has_value());  // the caller's setting is back
  // Row 2 is example 0's ending2: the pair (context, "header ending") with the special tokens.
  const text::Encoding e = tok.encode_pair("hello world", "and the naive");
  EXPECT_EQ(e.ids, f.input_ids[2]);
  EXPECT_EQ(e.type_ids, f.token_type_ids[2]);
  EXPECT_EQ(tok.token_to_id("[CLS]"), f.input_ids[2].front());
  EXPECT_EQ(1, f.token_type_ids[2].back());
  // longest_first trims the long context, and keeps the short second text whole.
  for (int64_t c = 0; c < 4; ++c) {
    const auto& ids = f.input_ids[static_cast<size_t>(4 + c)];
    const auto& types = f.token_type_ids[static_cast<size_t>(4 + c)];
    EXPECT_EQ(10u, ids.size()) << c;
    EXPECT_EQ(tok.encode(examples[1].header + " " + examples[1].endings[c], false).ids.size() + 1,
              static_cast<size_t>(std::count(types.begin(), types.end(), 1)))
        << c;
  }
}

TEST(MultipleChoiceFeatures, MalformedExamplesFailInOneLineNamingTheExample) {
  auto tok = test::bert_tokenizer();
  std::vector<MultipleChoiceExample> examples{{"hello", "and", {"a", "b", "c", "d"}, 0},
                                              {"hello", "and", {"a", "b", "c"}, 0}};
  EXPECT_THAT([&] { build_multiple_choice_features(tok, examples, 16); },
              testing::ThrowsMessage<Error>(
                  testing::HasSubstr("example 1 has 3 endings (expected 4: ending0..ending3)")));
  examples[1].endings.push_back("d");
  examples[1].label = 4;
  EXPECT_THAT([&] { build_multiple_choice_features(tok, examples, 16); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("example 1 has label 4 (expected 0..3)")));
  examples[1].label = -1;
  EXPECT_THAT([&] { build_multiple_choice_features(tok, examples, 16); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("example 1 has label -1 (expected 0..3)")));
  examples[1].label = 3;
  examples[1].endings[2] = "bad \xff byte";
  EXPECT_THAT([&] { build_multiple_choice_features(tok, examples, 16); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("example 1, ending2: ")));
  EXPECT_FALSE(tok.truncation().has_value());
}

TEST(MultipleChoiceSplit, PaddedAndPackedBatchesAreExamplesTimesChoicesRows) {
  auto tok = test::bert_tokenizer();
  const auto examples = generate(5, 1);
  const auto f = build_multiple_choice_features(tok, examples, 16);
  MultipleChoiceOptions o;
  o.max_seq_length = 16;
  o.pad_to_max_length = true;
  const MultipleChoiceSplit padded(f, o);
  o.pad_to_max_length = false;
  const MultipleChoiceSplit packed(f, o);
  EXPECT_TRUE(padded.has_labels());
  EXPECT_EQ(4, padded.prediction_width());
  const std::vector<int64_t> idx{4, 0, 2};
  const auto a = padded.collate(idx, true), b = packed.collate(idx, true);
  EXPECT_EQ(12, a.batch.B);
  EXPECT_EQ(12, b.batch.B);
  EXPECT_EQ(4, a.batch.num_choices);
  EXPECT_EQ(4, b.batch.num_choices);
  EXPECT_EQ(16, a.batch.T);
  EXPECT_EQ(nullptr, a.batch.seq_lens);
  EXPECT_EQ(nullptr, b.batch.attention_mask);
  ASSERT_EQ(a.real_lengths, b.real_lengths);
  ASSERT_EQ(12u, a.real_lengths.size());
  int64_t at = 0;
  for (int64_t r = 0; r < 12; ++r) {
    const auto& row = f.input_ids[static_cast<size_t>(idx[r / 4] * 4 + r % 4)];
    ASSERT_EQ(static_cast<int64_t>(row.size()), a.real_lengths[r]);
    EXPECT_EQ(a.real_lengths[r], b.batch.seq_lens[r]);
    for (int64_t t = 0; t < 16; ++t) {
      const bool real = t < a.real_lengths[r];
      EXPECT_EQ(real ? row[t] : 0, a.batch.input_ids[r * 16 + t]);
      EXPECT_EQ(real ? 1 : 0, a.batch.attention_mask[r * 16 + t]);
      if (real) {
        EXPECT_EQ(row[t], b.batch.input_ids[at + t]);
        EXPECT_EQ(a.batch.token_type_ids[r * 16 + t], b.batch.token_type_ids[at + t]);
      }
    }
    at += a.real_lengths[r];
  }
  for (int64_t k = 0; k < 3; ++k) {
    EXPECT_EQ(examples[idx[k]].label, a.batch.labels[k]);
    EXPECT_EQ(examples[idx[k]].label, b.batch.labels[k]);
  }
  EXPECT_EQ(12 * 16, a.positions);
  EXPECT_EQ(at, b.positions);
  EXPECT_EQ(nullptr, padded.collate(idx, false).batch.labels);
  // The longest choice, what padding a batch of the example costs per row.
  int64_t longest = 0;
  for (int64_t c = 0; c < 4; ++c)
    longest = std::max<int64_t>(longest, f.input_ids[static_cast<size_t>(8 + c)].size());
  EXPECT_EQ(longest, padded.feature_length(2));

  o.max_seq_length = 4;
  EXPECT_THAT([&] { MultipleChoiceSplit(f, o); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("example 0, ending0 has ")));
  auto bad = f;
  bad.labels[3] = 7;
  o.max_seq_length = 16;
  EXPECT_THAT([&] { MultipleChoiceSplit(bad, o); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("example 3 has label 7 (expected 0..3)")));
}

TEST(MultipleChoiceSplit, ScoresTheFirstMaximumAsRunSwagsAccuracy) {
  MultipleChoiceFeatures f;
  f.labels = {0, 1, 2, 3, 1};
  f.input_ids.assign(20, {1, 2});
  f.token_type_ids.assign(20, {0, 0});
  const MultipleChoiceSplit split(f, {});
  const std::vector<float> rows{
      0.9f,  0.1f, 0.0f, 0.0f,  // 0: right
      0.0f,  0.0f, 0.5f, 0.0f,  // 2: wrong
      1.0f,  1.0f, 1.0f, 1.0f,  // ties: the first, 0: wrong
      0.0f,  0.0f, 2.0f, 2.0f,  // ties: 2, wrong
      -3.0f, 5.0f, 5.0f, 1.0f   // ties: 1, right
  };
  const auto m = split.score(rows, "eval", false, "");
  EXPECT_EQ(1u, m.size());
  EXPECT_DOUBLE_EQ(static_cast<double>(2.0f / 5.0f), m["accuracy"].get<double>());
  // The model's logits for a batch of 2 examples become 2 rows.
  train::CollatedBatch cb;
  cb.batch.B = 8;
  std::vector<float> out(8);
  split.prediction_rows(cb, {1, 2, 3, 4, 5, 6, 7, 8}, out.data());
  EXPECT_EQ((std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}), out);
  EXPECT_THROW(split.prediction_rows(cb, {1, 2, 3, 4}, out.data()), Error);
}

TEST(SwagMaxSeqLength, RunSwagsDefaultAndCapWithItsWarnings) {
  std::string w;
  // No flag: model_max_length, at most 1024 (no model_max_length is transformers' VERY_LARGE_INTEGER).
  EXPECT_EQ(512, swag_max_seq_length(-1, 512, &w));
  EXPECT_EQ("", w);
  EXPECT_EQ(1024, swag_max_seq_length(-1, 1024, &w));
  EXPECT_EQ("", w);
  EXPECT_EQ(1024, swag_max_seq_length(-1, 4096, &w));
  EXPECT_THAT(w, testing::HasSubstr("very large `model_max_length` (4096). Picking 1024 instead."));
  EXPECT_EQ(1024, swag_max_seq_length(-1, 0, &w));
  EXPECT_THAT(w, testing::HasSubstr("(1000000000000000019884624838656). Picking 1024 instead."));
  // A flag: min(flag, model_max_length).
  EXPECT_EQ(80, swag_max_seq_length(80, 512, &w));
  EXPECT_EQ("", w);
  EXPECT_EQ(512, swag_max_seq_length(2048, 512, &w));
  EXPECT_EQ(
      "The max_seq_length passed (2048) is larger than the maximum length for the model (512). Using "
      "max_seq_length=512.",
      w);
  EXPECT_EQ(2048, swag_max_seq_length(2048, 0, &w));
  EXPECT_EQ("", w);
}

class SwagTrainsThroughTheTrainer : public ::testing::TestWithParam<bool> {};

TEST_P(SwagTrainsThroughTheTrainer, ToHighEvalAccuracy) {
  const bool pad = GetParam();
  // One thread: a 32-wide model gains nothing from two, and beside other tests (ctest -j) a second spinning
  // OpenMP thread can slow it a hundredfold.
  omp_set_num_threads(1);
  auto tok = test::bert_tokenizer();
  const auto train_f = build_multiple_choice_features(tok, generate(512, 7), 16);
  const auto eval_f = build_multiple_choice_features(tok, generate(128, 8), 16);
  MultipleChoiceOptions o;
  o.max_seq_length = 16;
  o.pad_to_max_length = pad;
  const MultipleChoiceSplit train_split(train_f, o), eval_split(eval_f, o);

  auto model_config = test::tiny_bert(static_cast<int64_t>(tok.vocab_size()), 1);
  // No dropout: learning from scratch that two tokens are equal, the tiny model gets there within the steps
  // for every seed tried only without the noise. The Trainer still builds its per-row dropout keys, which
  // the model checks against the batch's examples x choices rows.
  model_config.hidden_dropout_prob = model_config.attention_probs_dropout_prob = 0;
  model::EncoderModel model(model_config, model::HeadKind::multiple_choice, model::Precision::f32);
  model.init_weights(42);
  const train::TrainingArguments t =
      test::quick_args(std::string("swag_") + (pad ? "padded" : "packed"), 600, 2e-3);
  train::Trainer trainer(t, model, nullptr);
  trainer.train(train_split, nullptr, "");
  const auto m = trainer.evaluate(eval_split, false);
  EXPECT_GT(m.value("eval_accuracy", 0.0), 0.9) << m.dump();
  ASSERT_TRUE(m.contains("eval_loss")) << m.dump();
  EXPECT_LT(m["eval_loss"].get<double>(), 0.4) << m.dump();
}

INSTANTIATE_TEST_SUITE_P(PaddedAndPacked, SwagTrainsThroughTheTrainer, ::testing::Bool());

}  // namespace
}  // namespace ct::tasks

// Sequence classification through the Trainer: run_glue's features from a tokenizer.json, padded and packed
// collation, and a tiny BERT trained from random init on a learnable generated task (does the sentence pair
// mention "hello"?), scored with evaluate's accuracy / F1 and eval_loss, and the prediction file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <omp.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/rng.h"
#include "model/encoder_model.h"
#include "tasks/sequence_classification/sequence_classification_split.h"
#include "tasks/sequence_classification/sequence_features.h"
#include "text/hf_tokenizer.h"
#include "tiny_training.h"
#include "train/trainer.h"

namespace ct::tasks {
namespace {

// Pairs of short sentences over the fixture's vocabulary; the label says whether "hello" occurs in either.
struct Generated {
  std::vector<TextPair> texts;
  std::vector<int64_t> labels;
};
Generated generate(int n, uint64_t seed) {
  static const char* words[] = {"world", "cafe", "istanbul", "resume", "naive", "zurich", "strasse"};
  Generator g(seed);
  Generated out;
  auto sentence = [&](bool hello) {
    const int len = 3 + static_cast<int>(g.below(6));
    const int at = hello ? static_cast<int>(g.below(static_cast<uint64_t>(len))) : -1;
    std::string s;
    for (int i = 0; i < len; ++i)
      s += std::string(s.empty() ? "" : " ") + (i == at ? "hello" : words[g.below(7)]);
    return s;
  };
  for (int i = 0; i < n; ++i) {
    const int64_t label = static_cast<int64_t>(g.below(2));
    const bool in_first = label && g.below(2);
    out.texts.push_back({sentence(in_first), sentence(label && !in_first)});
    out.labels.push_back(label);
  }
  return out;
}

TEST(SequenceFeatures, PairsTruncateLongestFirstWithTheTokenizersSpecialTokens) {
  auto tok = test::bert_tokenizer();
  const std::vector<TextPair> texts{
      {"hello world", std::nullopt},
      {"hello world cafe istanbul resume naive zurich strasse", "hello cafe"},
      {"hello", "world cafe istanbul resume naive zurich strasse hello world cafe"}};
  const auto f = build_sequence_features(tok, texts, 8);
  const int32_t cls = tok.token_to_id("[CLS]"), sep = tok.token_to_id("[SEP]");
  for (int64_t i = 0; i < f.size(); ++i) {
    EXPECT_LE(f.input_ids[i].size(), 8u) << i;
    EXPECT_EQ(cls, f.input_ids[i].front()) << i;
    EXPECT_EQ(sep, f.input_ids[i].back()) << i;
  }
  EXPECT_THAT(f.token_type_ids[0], testing::Each(0));
  // longest_first takes tokens from the longer text first: both texts keep at least the shorter one's share.
  EXPECT_EQ(8u, f.input_ids[1].size());
  EXPECT_EQ(1, f.token_type_ids[1].back());
  EXPECT_FALSE(tok.truncation().has_value());  // the caller's setting is back
  EXPECT_THROW(build_sequence_features(tok, {{std::string("bad \xff byte"), std::nullopt}}, 8), Error);
}

TEST(SequenceClassificationSplit, PaddedAndPackedBatchesCarryTheSameTokensAndLabels) {
  auto tok = test::bert_tokenizer();
  const auto data = generate(5, 1);
  const auto f = build_sequence_features(tok, data.texts, 32);
  SequenceClassificationOptions o;
  o.max_seq_length = 32;
  const SequenceClassificationSplit padded(f, data.labels, {}, o);
  o.pad_to_max_length = false;
  const SequenceClassificationSplit packed(f, data.labels, {}, o);
  const std::vector<int64_t> idx{4, 0, 2};
  const auto a = padded.collate(idx, true), b = packed.collate(idx, true);
  ASSERT_EQ(a.real_lengths, b.real_lengths);
  int64_t at = 0;
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t t = 0; t < a.real_lengths[r]; ++t) {
      EXPECT_EQ(a.batch.input_ids[r * 32 + t], b.batch.input_ids[at + t]);
      EXPECT_EQ(1, a.batch.attention_mask[r * 32 + t]);
    }
    at += a.real_lengths[r];
    EXPECT_EQ(data.labels[idx[r]], a.batch.labels[r]);
    EXPECT_EQ(data.labels[idx[r]], b.batch.labels[r]);
  }
  EXPECT_EQ(96, a.positions);
  EXPECT_EQ(at, b.positions);
  EXPECT_EQ(nullptr, padded.collate(idx, false).batch.labels);
  EXPECT_THAT(
      [&] {
        SequenceClassificationSplit(f, {0, 1, 5, 0, 1}, {}, o);
      },
      testing::ThrowsMessage<Error>(testing::HasSubstr("example 2 has label id 5 (expected 0..1")));
  EXPECT_THAT(
      [&] {
        SequenceClassificationSplit(f, {0, 1}, {}, o);
      },
      testing::ThrowsMessage<Error>(testing::HasSubstr("2 labels for 5 features")));
  o.kind = LabelKind::regression;
  EXPECT_THAT(
      [&] {
        SequenceClassificationSplit(f, {}, {0.5f, 1, 2, 3, 4}, o);
      },
      testing::ThrowsMessage<Error>(testing::HasSubstr("regression: num_labels must be 1, got 2")));
}

class TrainsThroughTheTrainer : public ::testing::TestWithParam<bool> {};

TEST_P(TrainsThroughTheTrainer, ToHighAccuracyWithEvalLossAndPredictions) {
  const bool pad = GetParam();
  // One thread: a 32-wide model gains nothing from two, and beside other tests (ctest -j) a second spinning
  // OpenMP thread can slow it a hundredfold.
  omp_set_num_threads(1);
  auto tok = test::bert_tokenizer();
  const auto train_data = generate(512, 7), eval_data = generate(128, 8);
  const auto train_f = build_sequence_features(tok, train_data.texts, 32);
  const auto eval_f = build_sequence_features(tok, eval_data.texts, 32);
  SequenceClassificationOptions o;
  o.max_seq_length = 32;
  o.pad_to_max_length = pad;
  o.task_name = "mrpc";  // accuracy and F1
  o.label_list = {"no_hello", "hello"};
  o.predict_file_name = "predict_results_mrpc.txt";
  const SequenceClassificationSplit train_split(train_f, train_data.labels, {}, o),
      eval_split(eval_f, eval_data.labels, {}, o);

  const auto model_config = test::tiny_bert(static_cast<int64_t>(tok.vocab_size()));
  model::EncoderModel model(model_config, model::HeadKind::sequence_classification, model::Precision::f32);
  model.init_weights(42);
  const train::TrainingArguments t =
      test::quick_args(std::string("seqcls_") + (pad ? "padded" : "packed"), 160, 1e-3);
  train::Trainer trainer(t, model, nullptr);
  trainer.train(train_split, nullptr, "");
  const auto m = trainer.evaluate(eval_split, false);
  EXPECT_GT(m.value("eval_accuracy", 0.0), 0.9) << m.dump();
  EXPECT_GT(m.value("eval_f1", 0.0), 0.9) << m.dump();
  ASSERT_TRUE(m.contains("eval_loss")) << m.dump();
  EXPECT_LT(m["eval_loss"].get<double>(), 0.4) << m.dump();
  EXPECT_DOUBLE_EQ((m["eval_accuracy"].get<double>() + m["eval_f1"].get<double>()) / 2,
                   m["eval_combined_score"].get<double>());

  // Predictions of an unlabelled split: the file run_glue writes, no scores.
  const SequenceClassificationSplit test_split(eval_f, {}, {}, o);
  const auto rows = trainer.predict_rows(test_split);
  EXPECT_TRUE(test_split.score(rows, "predict", true, t.output_dir).empty());
  std::ifstream in(t.output_dir + "/predict_results_mrpc.txt");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), testing::StartsWith("index\tprediction\n0\t"));
  const auto ids = test_split.predicted_ids(rows);
  EXPECT_EQ(128u, ids.size());
}

INSTANTIATE_TEST_SUITE_P(PaddedAndPacked, TrainsThroughTheTrainer, ::testing::Bool());

}  // namespace
}  // namespace ct::tasks

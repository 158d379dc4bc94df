// Token classification through the Trainer: run_ner's features from pre-split words (labels on first
// sub-tokens), padded and packed collation, and a tiny BERT trained from random init on generated tags,
// scored by seqeval.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/rng.h"
#include "model/encoder_model.h"
#include "tasks/token_classification/ner_labels.h"
#include "tasks/token_classification/token_classification_split.h"
#include "tasks/token_classification/token_features.h"
#include "text/hf_tokenizer.h"
#include "tiny_training.h"
#include "train/trainer.h"

namespace ct::tasks {
namespace {

const std::vector<std::string> kLabels{"O", "B-GREET", "I-GREET", "B-LOC", "I-LOC"};

// Sentences over the fixture's vocabulary: "hello" (B-GREET) and a "world" right after it (I-GREET); zurich
// and istanbul are places (B-LOC), "strasse" after one continues it (I-LOC); the rest O. "unaffable" splits
// into several sub-tokens.
struct Generated {
  std::vector<std::vector<std::string>> words;
  std::vector<std::vector<int64_t>> labels;
};
Generated generate(int n, uint64_t seed) {
  static const char* filler[] = {"cafe", "resume", "naive", "cafes", "naive", "cafe"};
  Generator g(seed);
  Generated out;
  for (int i = 0; i < n; ++i) {
    std::vector<std::string> w;
    std::vector<int64_t> l;
    const int len = 3 + static_cast<int>(g.below(8));
    for (int k = 0; k < len; ++k) {
      const uint64_t r = g.below(10);
      if (r == 0) {
        w.push_back("hello"), l.push_back(1);
        if (g.below(2)) w.push_back("world"), l.push_back(2);
      } else if (r == 1) {
        w.push_back(g.below(2) ? "zurich" : "istanbul"), l.push_back(3);
        if (g.below(2)) w.push_back("strasse"), l.push_back(4);
      } else {
        w.push_back(filler[g.below(6)]), l.push_back(0);
      }
    }
    out.words.push_back(std::move(w));
    out.labels.push_back(std::move(l));
  }
  return out;
}

TEST(TokenFeatures, LabelsSitOnFirstSubTokensOrOnEveryOne) {
  auto tok = test::bert_tokenizer();
  const std::vector<std::vector<std::string>> words{{"hello", "cafes", "zurich", "strasse"}};
  const std::vector<std::vector<int64_t>> labels{{1, 0, 3, 4}};
  const auto b_to_i = b_to_i_labels(kLabels);
  const auto first = build_token_features(tok, words, labels, 64, false, b_to_i);
  const auto all = build_token_features(tok, words, labels, 64, true, b_to_i);
  const auto& ids = first.input_ids[0];
  ASSERT_GT(ids.size(), 6u) << "cafes should split into sub-tokens";
  EXPECT_EQ(-100, first.labels[0].front());  // [CLS]
  EXPECT_EQ(-100, first.labels[0].back());   // [SEP]
  EXPECT_EQ(1, first.labels[0][1]);
  int64_t counted = 0, all_counted = 0;
  for (size_t t = 0; t < ids.size(); ++t) {
    counted += first.labels[0][t] != -100;
    all_counted += all.labels[0][t] != -100;
  }
  EXPECT_EQ(4, counted);  // one per word
  EXPECT_EQ(static_cast<int64_t>(ids.size()) - 2, all_counted);
  EXPECT_FALSE(tok.truncation().has_value());
  EXPECT_THROW(build_token_features(tok, words, {{1, 0}}, 64, false, b_to_i), Error);
}

TEST(TokenClassificationSplit, RefusesLabelsOutsideTheListAndFeaturesPastMaxSeqLength) {
  TokenFeatures f;
  f.input_ids = {{2, 5, 3}};
  f.token_type_ids = {{0, 0, 0}};
  f.labels = {{-100, 7, -100}};
  TokenClassificationOptions o;
  o.label_list = kLabels;
  EXPECT_THAT(
      [&] { TokenClassificationSplit(f, o); },
      testing::ThrowsMessage<Error>(testing::HasSubstr("feature 0 has label id 7 (expected 0..4 or -100)")));
  f.labels = {{-100, 1, -100}};
  o.max_seq_length = 2;
  EXPECT_THAT([&] { TokenClassificationSplit(f, o); },
              testing::ThrowsMessage<Error>(
                  testing::HasSubstr("feature 0 has 3 tokens, more than --max_seq_length 2")));
  o.label_list.clear();
  EXPECT_THAT([&] { TokenClassificationSplit(f, o); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("an empty label list")));
}

class NerTrainsThroughTheTrainer : public ::testing::TestWithParam<bool> {};

TEST_P(NerTrainsThroughTheTrainer, ToHighEntityF1) {
  const bool pad = GetParam();
  omp_set_num_threads(1);  // a 32-wide model; see sequence_classification_test.cpp
  auto tok = test::bert_tokenizer();
  const auto b_to_i = b_to_i_labels(kLabels);
  const auto train_data = generate(384, 3), eval_data = generate(96, 4);
  const auto train_f = build_token_features(tok, train_data.words, train_data.labels, 48, false, b_to_i);
  const auto eval_f = build_token_features(tok, eval_data.words, eval_data.labels, 48, false, b_to_i);
  TokenClassificationOptions o;
  o.max_seq_length = 48;
  o.pad_to_max_length = pad;
  o.label_list = kLabels;
  o.return_entity_level_metrics = true;
  const TokenClassificationSplit train_split(train_f, o), eval_split(eval_f, o);

  const auto c =
      test::tiny_bert(static_cast<int64_t>(tok.vocab_size()), static_cast<int64_t>(kLabels.size()));
  model::EncoderModel model(c, model::HeadKind::token_classification, model::Precision::f32);
  model.init_weights(42);
  const train::TrainingArguments t =
      test::quick_args(std::string("ner_") + (pad ? "padded" : "packed"), 200, 1e-3);
  train::Trainer trainer(t, model, nullptr);
  trainer.train(train_split, nullptr, "");
  const auto m = trainer.evaluate(eval_split, false);
  EXPECT_GT(m.value("eval_overall_f1", 0.0), 0.9) << m.dump();
  EXPECT_GT(m.value("eval_LOC_f1", 0.0), 0.9) << m.dump();
  EXPECT_GT(m.value("eval_GREET_f1", 0.0), 0.9) << m.dump();
  EXPECT_TRUE(m.contains("eval_loss")) << m.dump();

  const auto rows = trainer.predict_rows(eval_split);
  eval_split.score(rows, "predict", true, t.output_dir);
  std::ifstream in(t.output_dir + "/predictions.txt");
  std::string line;
  int64_t lines = 0;
  while (std::getline(in, line)) {
    std::istringstream tags(line);
    std::string tag;
    int64_t n = 0;
    while (tags >> tag) ++n;
    EXPECT_EQ(static_cast<int64_t>(eval_data.words[static_cast<size_t>(lines)].size()), n)
        << "line " << lines;
    ++lines;
  }
  EXPECT_EQ(96, lines);
}

INSTANTIATE_TEST_SUITE_P(PaddedAndPacked, NerTrainsThroughTheTrainer, ::testing::Bool());

}  // namespace
}  // namespace ct::tasks

// Post-processing on hand-made logits: best span over all windows of an example, invalid spans dropped,
// max_answer_length, "empty", softmax probabilities, SQuAD v2 null answers and thresholds, and the files.
#include "tasks/question_answering/postprocess.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "../../data/test_util.h"
#include "core/fs.h"

namespace ct::tasks {
namespace {

text::Tokenizer tokenizer() {
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "q1", "q2", "uber"};
  for (int i = 0; i < 10; ++i) vocab.push_back(ct::str("w", i));
  return text::Tokenizer::from_vocab(vocab);
}

// One example "w0 ... w9", question "q1 q2", max_seq_length 9, doc_stride 2: windows [0,4) [2,6) [4,8)
// [6,10), each sequence [CLS] q1 q2 [SEP] c c c c [SEP]; context tokens at positions 4..7.
struct Fixture {
  std::vector<Example> examples;
  FeatureSet features;
  std::vector<float> start, end;
  static constexpr int64_t kLen = 9;

  Fixture() : examples(make()), features(build(examples)) {
    start.assign(static_cast<size_t>(features.size() * kLen), -10.0f);
    end = start;
  }
  static std::vector<Example> make() {
    Example e;
    e.id = "ex1";
    e.context = "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9";
    e.question = "q1 q2";
    return {e};
  }
  static FeatureSet build(const std::vector<Example>& ex) {
    FeatureOptions o;
    o.max_seq_length = kLen;
    o.doc_stride = 2;
    return FeatureSet::build(ex, tokenizer(), o);
  }
  void set(int64_t f, int64_t pos, float s, float e) {
    start[static_cast<size_t>(f * kLen + pos)] = s;
    end[static_cast<size_t>(f * kLen + pos)] = e;
  }
  std::vector<ExamplePrediction> run(const PostprocessOptions& o) {
    return postprocess_qa_predictions(examples, features, start, end, kLen, o);
  }
};

TEST(Postprocess, BestSpanAcrossWindows) {
  Fixture fx;
  ASSERT_EQ(fx.features.size(), 4);
  fx.set(0, 1, 20, 20);  // question token: never a candidate
  fx.set(2, 5, 5, -10);  // window [4,8): position 5 = w5
  fx.set(2, 6, -10, 4);  // position 6 = w6
  fx.set(3, 4, 3, -10);  // window [6,10): position 4 = w6
  fx.set(3, 5, -10, 3);  // position 5 = w7
  PostprocessOptions o;
  auto p = fx.run(o);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].id, "ex1");
  EXPECT_EQ(p[0].text, "w5 w6");
  ASSERT_EQ(p[0].nbest.size(), 20u);
  EXPECT_EQ(p[0].nbest[0].text, "w5 w6");
  EXPECT_EQ(p[0].nbest[0].start_logit, 5.0f);
  EXPECT_EQ(p[0].nbest[0].end_logit, 4.0f);
  EXPECT_EQ(p[0].nbest[1].text, "w6 w7");
  double sum = 0;
  for (size_t k = 0; k < p[0].nbest.size(); ++k) {
    sum += p[0].nbest[k].probability;
    if (k > 0) {
      EXPECT_LE(p[0].nbest[k].start_logit + p[0].nbest[k].end_logit,
                p[0].nbest[k - 1].start_logit + p[0].nbest[k - 1].end_logit);
    }
    EXPECT_FALSE(p[0].nbest[k].text.empty());
  }
  EXPECT_NEAR(sum, 1.0, 1e-5);
  // Softmax of scores 9 and 6 relative to each other.
  EXPECT_NEAR(p[0].nbest[0].probability / p[0].nbest[1].probability, std::exp(3.0), 1e-3);
}

TEST(Postprocess, MaxAnswerLengthAndOrder) {
  Fixture fx;
  fx.set(2, 5, 5, -10);
  fx.set(2, 6, -10, 4);
  fx.set(3, 4, 3, -10);
  fx.set(3, 5, -10, 3);
  PostprocessOptions o;
  o.max_answer_length = 1;
  auto p = fx.run(o);
  // Single tokens only: w5 alone scores 5 - 10 = -5, w6 alone -10 + 4 = -6.
  EXPECT_EQ(p[0].text, "w5");
  EXPECT_EQ(p[0].nbest[1].text, "w6");
  for (const auto& c : p[0].nbest) EXPECT_EQ(c.text.find(' '), std::string::npos) << c.text;
}

TEST(Postprocess, EmptyWhenNothingValid) {
  Fixture fx;
  for (int64_t f = 0; f < 4; ++f) fx.set(f, 2, 50, 50);  // the top start and end are question tokens
  PostprocessOptions o;
  o.n_best_size = 1;
  auto p = fx.run(o);
  ASSERT_EQ(p[0].nbest.size(), 1u);
  EXPECT_EQ(p[0].text, "empty");
  EXPECT_EQ(p[0].nbest[0].probability, 1.0f);
  EXPECT_EQ(p[0].nbest[0].start_logit, 0.0f);
}

TEST(Postprocess, ExampleWithoutFeaturesGetsEmpty) {
  Fixture fx;
  fx.examples.push_back(fx.examples[0]);
  fx.examples[1].id = "orphan";
  auto p = fx.run(PostprocessOptions{});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].text, "empty");
}

TEST(Postprocess, V2NullAnswer) {
  Fixture fx;
  fx.set(2, 5, 5, -10);
  fx.set(2, 6, -10, 4);
  // Null scores per window: 4, 2, 6, 8 -> min 2 (window 1).
  fx.set(0, 0, 2, 2);
  fx.set(1, 0, 1, 1);
  fx.set(2, 0, 3, 3);
  fx.set(3, 0, 8, 0);
  PostprocessOptions o;
  o.version_2_with_negative = true;
  auto p = fx.run(o);
  EXPECT_EQ(p[0].text, "w5 w6");
  EXPECT_FLOAT_EQ(static_cast<float>(p[0].null_score_diff), 2.0f - 9.0f);
  // The null answer is among the candidates, with its window's logits.
  bool has_null = false;
  for (const auto& c : p[0].nbest) {
    if (c.text.empty()) {
      has_null = true;
      EXPECT_EQ(c.start_logit, 1.0f);
      EXPECT_EQ(c.end_logit, 1.0f);
    }
  }
  EXPECT_TRUE(has_null);
  o.null_score_diff_threshold = -8.0;  // -7 > -8: answer nothing
  EXPECT_EQ(fx.run(o)[0].text, "");
  // A dominant null score wins at threshold 0 and leads the n-best list.
  for (int64_t f = 0; f < 4; ++f) fx.set(f, 0, 10, 10);
  o.null_score_diff_threshold = 0.0;
  auto q = fx.run(o);
  EXPECT_EQ(q[0].text, "");
  EXPECT_EQ(q[0].nbest[0].text, "");
  EXPECT_FLOAT_EQ(static_cast<float>(q[0].null_score_diff), 20.0f - 9.0f);
}

TEST(Postprocess, V2NullKeptWhenOutsideTopN) {
  Fixture fx;
  fx.set(2, 5, 5, -10);
  fx.set(2, 6, -10, 4);
  PostprocessOptions o;
  o.version_2_with_negative = true;
  o.n_best_size = 2;
  // Null score -20 ranks below the top 2 spans and is appended after them.
  auto p = fx.run(o);
  ASSERT_EQ(p[0].nbest.size(), 3u);
  EXPECT_EQ(p[0].nbest[2].text, "");
}

TEST(Postprocess, BadLogitShapes) {
  Fixture fx;
  fx.start.pop_back();
  data::testing::expect_error([&] { fx.run(PostprocessOptions{}); },
                              {"4 features x 9 positions = 36", "got 35"});
  Fixture gx;
  PostprocessOptions o;
  o.n_best_size = 0;
  data::testing::expect_error([&] { gx.run(o); }, {"--n_best_size"});
  o.n_best_size = 20;
  o.max_answer_length = 0;
  data::testing::expect_error([&] { gx.run(o); }, {"--max_answer_length"});
}

TEST(Postprocess, WritesHfStyleFiles) {
  data::testing::TempDir dir;
  ExamplePrediction a;
  a.id = "id1";
  a.text =
      "\xC3\xBC"
      "ber";
  a.nbest = {Candidate{"\xC3\xBC"
                       "ber",
                       1.5f, 0.25f, 0.75f},
             Candidate{"w", 0.5f, 0.25f, 0.25f}};
  a.null_score_diff = -1.75;
  write_predictions({a}, dir.path(), "eval", false);
  const std::string pred = fs::read_file(dir.path() + "/eval_predictions.json");
  EXPECT_EQ(pred, "{\n    \"id1\": \"\\u00fcber\"\n}\n");
  const std::string nbest = fs::read_file(dir.path() + "/eval_nbest_predictions.json");
  const std::string head =
      "{\n    \"id1\": [\n        {\n            \"start_logit\": 1.5,\n            \"end_logit\": 0.25,";
  EXPECT_EQ(nbest.rfind(head, 0), 0u) << nbest;
  auto j = nlohmann::json::parse(nbest);
  ASSERT_EQ(j["id1"].size(), 2u);
  EXPECT_EQ(j["id1"][0]["text"],
            "\xC3\xBC"
            "ber");
  EXPECT_EQ(j["id1"][0]["end_logit"], 0.25);
  EXPECT_EQ(j["id1"][1]["probability"], 0.25);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/eval_null_odds.json"));
  write_predictions({a}, dir.path(), "predict", true);
  auto odds = nlohmann::json::parse(fs::read_file(dir.path() + "/predict_null_odds.json"));
  EXPECT_EQ(odds["id1"], -1.75);
  // No temporary files left behind.
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 5);
  data::testing::expect_error([&] { write_predictions({a}, dir.path() + "/no/such", "eval", false); },
                              {"no/such"});
}

}  // namespace
}  // namespace ct::tasks

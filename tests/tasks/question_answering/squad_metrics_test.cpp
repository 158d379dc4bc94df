// Official SQuAD v1.1 / v2.0 scores against values worked out by hand (and by the official scripts' rules).
#include "tasks/question_answering/squad_metrics.h"

#include <gtest/gtest.h>

#include "../../data/test_util.h"

namespace ct::tasks {
namespace {

TEST(SquadMetrics, Normalize) {
  EXPECT_EQ(normalize_answer("The Cat!"), "cat");
  EXPECT_EQ(normalize_answer("  an  apple, the pear  "), "apple pear");
  // Articles only as whole words.
  EXPECT_EQ(normalize_answer("theater anthem a"), "theater anthem");
  // Lower-casing beyond ASCII; the article is dropped, non-ASCII letters are word characters.
  EXPECT_EQ(normalize_answer("\xC3\x9Cn\xC3\xAF"
                             "code THE Stra\xC3\x9F"
                             "e"),
            "\xC3\xBCn\xC3\xAF"
            "code stra\xC3\x9F"
            "e");
  // '_' and '-' are punctuation and vanish, joining words.
  EXPECT_EQ(normalize_answer("a_b the-end"), "ab theend");
  EXPECT_EQ(normalize_answer("l'\xC3\xA9t\xC3\xA9"), "l\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(normalize_answer("A. B."), "b");
  // Unicode whitespace collapses like Python's str.split().
  EXPECT_EQ(normalize_answer("x\xC2\xA0\xE3\x80\x80y\t\nz"), "x y z");
  EXPECT_EQ(normalize_answer(""), "");
}

TEST(SquadMetrics, PerQuestionScores) {
  EXPECT_EQ(exact_match_score("the big cat", "Big cat."), 1.0);
  EXPECT_EQ(exact_match_score("big cats", "big cat"), 0.0);
  EXPECT_DOUBLE_EQ(f1_score("york", "New York City"), 0.5);
  EXPECT_DOUBLE_EQ(f1_score("in 1987", "1987"), 2.0 / 3.0);
  // Repeated tokens count as a multiset.
  EXPECT_DOUBLE_EQ(f1_score("go go go", "go"), 0.5);
  EXPECT_EQ(f1_score("", "x"), 0.0);
  EXPECT_EQ(f1_score("the", "a"), 0.0);
}

TEST(SquadMetrics, V1MaxOverGoldAnswers) {
  std::vector<GoldAnswers> gold = {{"q1", {"the big cat", "cat"}},
                                   {"q2", {"New York City"}},
                                   {"q3", {"1987"}},
                                   {"q4", {"red car", "a red car"}}};
  PredictionMap pred = {{"q1", "big cat"}, {"q2", "york"}, {"q3", "in 1987"}, {"q4", "blue"}};
  Metrics m = squad_v1(gold, pred);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].name, "exact_match");
  EXPECT_EQ(m[1].name, "f1");
  EXPECT_DOUBLE_EQ(metric(m, "exact_match"), 25.0);
  EXPECT_NEAR(metric(m, "f1"), 100.0 * (1 + 0.5 + 2.0 / 3.0 + 0) / 4, 1e-12);
  // A missing prediction scores 0 but still counts in the total.
  pred.erase("q1");
  EXPECT_DOUBLE_EQ(metric(squad_v1(gold, pred), "exact_match"), 0.0);
  EXPECT_NEAR(metric(squad_v1(gold, pred), "f1"), 100.0 * (0.5 + 2.0 / 3.0) / 4, 1e-12);
  data::testing::expect_error([&] { metric(m, "bogus"); }, {"bogus"});
}

TEST(SquadMetrics, V1RejectsUnanswerable) {
  data::testing::expect_error(
      [] {
        squad_v1({{"z9", {}}}, {{"z9", "x"}});
      },
      {"z9", "--version_2_with_negative"});
}

std::vector<GoldAnswers> v2_gold() {
  // "e"'s only gold answer normalizes to "" and is dropped, leaving [""]: it counts as HasAns (has text) but
  // is matched by an empty prediction.
  return {{"a", {"Paris"}}, {"b", {}}, {"c", {"the blue house"}}, {"d", {}}, {"e", {"the"}}};
}
PredictionMap v2_pred() {
  return {{"a", "paris"}, {"b", ""}, {"c", "house"}, {"d", "something"}, {"e", ""}};
}

TEST(SquadMetrics, V2HasAnsNoAnsAndBest) {
  Metrics m = squad_v2(v2_gold(), v2_pred());
  std::vector<std::string> names;
  for (const auto& x : m) names.push_back(x.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total",
                                      "NoAns_exact", "NoAns_f1", "NoAns_total", "best_exact",
                                      "best_exact_thresh", "best_f1", "best_f1_thresh"}));
  // exact: a 1, b 1, c 0, d 0, e 1; f1: c = 2*(1/1*1/2)/(1.5) = 2/3.
  EXPECT_DOUBLE_EQ(metric(m, "exact"), 60.0);
  EXPECT_NEAR(metric(m, "f1"), 100.0 * (1 + 1 + 2.0 / 3.0 + 0 + 1) / 5, 1e-12);
  EXPECT_EQ(metric(m, "total"), 5.0);
  EXPECT_TRUE(m[2].integer);
  EXPECT_NEAR(metric(m, "HasAns_exact"), 200.0 / 3.0, 1e-12);
  EXPECT_NEAR(metric(m, "HasAns_f1"), 100.0 * (2 + 2.0 / 3.0) / 3, 1e-12);
  EXPECT_EQ(metric(m, "HasAns_total"), 3.0);
  EXPECT_DOUBLE_EQ(metric(m, "NoAns_exact"), 50.0);
  EXPECT_DOUBLE_EQ(metric(m, "NoAns_f1"), 50.0);
  EXPECT_EQ(metric(m, "NoAns_total"), 2.0);
  // All no-answer probabilities 0: running sum from 2 (no-answer questions) in gold order peaks at 3.
  EXPECT_DOUBLE_EQ(metric(m, "best_exact"), 60.0);
  EXPECT_EQ(metric(m, "best_exact_thresh"), 0.0);
  // f1 running sum: 2, 3, 3, 3.667 (c), 2.667, 3.667.
  EXPECT_NEAR(metric(m, "best_f1"), 100.0 * (3 + 2.0 / 3.0) / 5, 1e-12);
  EXPECT_EQ(metric(m, "best_f1_thresh"), 0.0);
}

TEST(SquadMetrics, V2BestThresholdFollowsNoAnswerProbabilities) {
  std::unordered_map<std::string, double> na = {{"a", 0.1}, {"b", 0.9}, {"c", 0.5}, {"d", 0.2}, {"e", 0.3}};
  Metrics m = squad_v2(v2_gold(), v2_pred(), &na);
  // exact order a d e c b: 2 -> 3 (0.1) -> 2 -> 3 -> 3 -> 3.
  EXPECT_DOUBLE_EQ(metric(m, "best_exact"), 60.0);
  EXPECT_DOUBLE_EQ(metric(m, "best_exact_thresh"), 0.1);
  // f1: 2 -> 3 -> 2 -> 3 -> 3.667 (0.5) -> 3.667.
  EXPECT_NEAR(metric(m, "best_f1"), 100.0 * (3 + 2.0 / 3.0) / 5, 1e-12);
  EXPECT_DOUBLE_EQ(metric(m, "best_f1_thresh"), 0.5);
  // A threshold below some probabilities turns those questions into "no answer" predictions.
  Metrics t = squad_v2(v2_gold(), v2_pred(), &na, 0.4);
  // c (0.5) and b (0.9) predicted empty: c has an answer -> 0, b has none -> 1.
  EXPECT_DOUBLE_EQ(metric(t, "exact"), 60.0);
  EXPECT_NEAR(metric(t, "f1"), 100.0 * (1 + 1 + 0 + 0 + 1) / 5, 1e-12);
}

TEST(SquadMetrics, V2WithoutUnanswerableHasNoNoAnsKeys) {
  Metrics m = squad_v2({{"a", {"x"}}}, {{"a", "x"}});
  for (const auto& x : m) EXPECT_EQ(x.name.rfind("NoAns", 0), std::string::npos) << x.name;
  EXPECT_DOUBLE_EQ(metric(m, "exact"), 100.0);
  EXPECT_DOUBLE_EQ(metric(m, "best_f1"), 100.0);
}

}  // namespace
}  // namespace ct::tasks

// evaluate's metrics against the libraries it calls (scikit-learn 1.2, SciPy 1.10) and a seqeval 1.2.2
// re-implementation, on tests/tasks/data/metrics_golden.json (tests/tasks/tools/make_metrics_golden.py).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tasks/metrics/classification_metrics.h"
#include "tasks/metrics/glue_metric.h"
#include "tasks/metrics/seqeval.h"

using ct::tasks::TagSequences;
using nlohmann::json;

namespace {

const json& golden() {
  static const json j = [] {
    std::ifstream f(std::string(CORETRAIN_TEST_DATA) + "/metrics_golden.json");
    return json::parse(f);
  }();
  return j;
}

// SciPy and NumPy sum in other orders (pairwise, BLAS dot): a few ulps of double.
void expect_close(double expected, double got, const std::string& what) {
  EXPECT_NEAR(expected, got, 1e-12 * std::max(1.0, std::abs(expected))) << what;
}

}  // namespace

TEST(ClassificationMetrics, MatchScikitLearn) {
  for (const auto& c : golden()["classification"]) {
    const auto p = c["predictions"].get<std::vector<int64_t>>();
    const auto r = c["references"].get<std::vector<int64_t>>();
    const std::string name = c["name"];
    EXPECT_DOUBLE_EQ(c["accuracy"].get<double>(), ct::tasks::accuracy(p, r)) << name;
    expect_close(c["matthews_correlation"].get<double>(), ct::tasks::matthews_corrcoef(p, r), name + " mcc");
    if (c.contains("f1")) {
      EXPECT_DOUBLE_EQ(c["f1"].get<double>(), ct::tasks::f1_binary(p, r)) << name;
    }
  }
  for (const auto& c : golden()["multilabel"]) {
    const auto p = c["predictions"].get<std::vector<int64_t>>();
    const auto r = c["references"].get<std::vector<int64_t>>();
    EXPECT_DOUBLE_EQ(c["f1"].get<double>(), ct::tasks::f1_micro_multilabel(p, r)) << c["name"];
  }
}

TEST(ClassificationMetrics, RegressionMatchesSciPyAndScikitLearn) {
  for (const auto& c : golden()["regression"]) {
    const auto p = c["predictions"].get<std::vector<float>>();
    const auto r = c["references"].get<std::vector<float>>();
    const std::vector<double> pd(p.begin(), p.end()), rd(r.begin(), r.end());
    const std::string name = c["name"];
    for (const char* key : {"pearson", "spearmanr"}) {
      const double got =
          std::string(key) == "pearson" ? ct::tasks::pearson(pd, rd) : ct::tasks::spearman(pd, rd);
      if (c[key].is_null())
        EXPECT_TRUE(std::isnan(got)) << name << " " << key << ": SciPy says NaN (a constant input)";
      else
        expect_close(c[key].get<double>(), got, name + " " + key);
    }
    // float32 inputs: NumPy's pairwise float32 sum and our double sum may round to neighbouring floats.
    const double mse = c["mse"];
    EXPECT_NEAR(mse, ct::tasks::mean_squared_error(p, r), 2.5e-7 * mse) << name;
  }
}

TEST(ClassificationMetrics, RefuseWhatScikitLearnRefuses) {
  const std::vector<int64_t> a{0, 1, 2}, b{0, 1, 1}, two{0, 2, 2};
  EXPECT_THAT([&] { ct::tasks::f1_binary(a, b); },
              testing::ThrowsMessage<ct::Error>(testing::HasSubstr("3 distinct labels")));
  EXPECT_THAT([&] { ct::tasks::f1_binary(two, two); },
              testing::ThrowsMessage<ct::Error>(testing::HasSubstr("no label 1")));
  EXPECT_THAT(
      [&] {
        ct::tasks::accuracy(a, std::vector<int64_t>{0, 1});
      },
      testing::ThrowsMessage<ct::Error>(testing::HasSubstr("3 predictions for 2 references")));
  EXPECT_THAT([&] { ct::tasks::accuracy({}, {}); },
              testing::ThrowsMessage<ct::Error>(testing::HasSubstr("evaluation set is empty")));
  EXPECT_THAT([&] { ct::tasks::f1_micro_multilabel(a, b); },
              testing::ThrowsMessage<ct::Error>(testing::HasSubstr("cell 2 holds prediction 2")));
}

TEST(GlueMetric, PicksEvaluatesMetricsPerTaskAndAddsTheCombinedScore) {
  const std::vector<int64_t> p{1, 0, 1, 1}, r{1, 0, 0, 1};
  auto names = [](const ct::tasks::Metrics& m) {
    std::vector<std::string> n;
    for (const auto& x : m) n.push_back(x.name);
    return n;
  };
  auto mrpc = ct::tasks::glue_classification_metrics("mrpc", p, r);
  EXPECT_THAT(names(mrpc), testing::ElementsAre("accuracy", "f1", "combined_score"));
  EXPECT_DOUBLE_EQ(0.75, mrpc[0].value);
  EXPECT_DOUBLE_EQ(0.8, mrpc[1].value);
  EXPECT_DOUBLE_EQ((0.75 + 0.8) / 2, mrpc[2].value);
  EXPECT_THAT(names(ct::tasks::glue_classification_metrics("cola", p, r)),
              testing::ElementsAre("matthews_correlation"));
  EXPECT_THAT(names(ct::tasks::glue_classification_metrics("sst2", p, r)), testing::ElementsAre("accuracy"));
  EXPECT_THAT(names(ct::tasks::glue_classification_metrics("", p, r)), testing::ElementsAre("accuracy"));
  const std::vector<float> x{0.5f, 2.f, 4.f}, y{1.f, 2.f, 5.f};
  EXPECT_THAT(names(ct::tasks::glue_regression_metrics("stsb", x, y)),
              testing::ElementsAre("pearson", "spearmanr", "combined_score"));
  EXPECT_THAT(names(ct::tasks::glue_regression_metrics("", x, y)), testing::ElementsAre("mse"));
  EXPECT_THAT([&] { ct::tasks::glue_classification_metrics("mprc", p, r); },
              testing::ThrowsMessage<ct::Error>(testing::HasSubstr("--task_name mprc is not a GLUE task")));
  EXPECT_THAT([&] { ct::tasks::glue_regression_metrics("mrpc", x, y); },
              testing::ThrowsMessage<ct::Error>(testing::HasSubstr("mrpc is a classification task")));
}

TEST(Seqeval, MatchesTheReferenceOnIobEdgeCasesAndRandomTags) {
  for (const auto& c : golden()["seqeval"]) {
    const auto p = c["predictions"].get<TagSequences>();
    const auto r = c["references"].get<TagSequences>();
    const json& want = c["scores"];
    const std::string name = c["name"];
    const auto got = ct::tasks::seqeval(p, r);
    EXPECT_DOUBLE_EQ(want["overall_precision"].get<double>(), got.overall_precision) << name;
    EXPECT_DOUBLE_EQ(want["overall_recall"].get<double>(), got.overall_recall) << name;
    EXPECT_DOUBLE_EQ(want["overall_f1"].get<double>(), got.overall_f1) << name;
    EXPECT_DOUBLE_EQ(want["overall_accuracy"].get<double>(), got.overall_accuracy) << name;
    size_t types = 0;
    for (const auto& [key, v] : want.items()) {
      if (!v.is_object()) continue;
      ++types;
      ASSERT_TRUE(got.per_type.count(key)) << name << ": no scores for type " << key;
      const auto& s = got.per_type.at(key);
      EXPECT_DOUBLE_EQ(v["precision"].get<double>(), s.precision) << name << " " << key;
      EXPECT_DOUBLE_EQ(v["recall"].get<double>(), s.recall) << name << " " << key;
      EXPECT_DOUBLE_EQ(v["f1"].get<double>(), s.f1) << name << " " << key;
      EXPECT_EQ(v["number"].get<int64_t>(), s.number) << name << " " << key;
    }
    EXPECT_EQ(types, got.per_type.size()) << name;
  }
}

TEST(Seqeval, ChunksFollowTheConllevalRules) {
  using C = ct::tasks::Chunk;
  EXPECT_THAT(ct::tasks::chunks_of({{"I-PER", "I-PER", "O"}}), testing::ElementsAre(C{"PER", 0, 1}));
  EXPECT_THAT(ct::tasks::chunks_of({{"B-PER", "I-LOC"}}),
              testing::ElementsAre(C{"PER", 0, 0}, C{"LOC", 1, 1}));
  // Each sentence is followed by an implicit O, so a chunk never crosses a sentence end.
  EXPECT_THAT(ct::tasks::chunks_of({{"B-PER"}, {"I-PER"}}),
              testing::ElementsAre(C{"PER", 0, 0}, C{"PER", 2, 2}));
  EXPECT_THAT(ct::tasks::chunks_of({{"B", "I", "O"}}), testing::ElementsAre(C{"_", 0, 1}));
}

TEST(Seqeval, RefusesMismatchedShapesNamingTheSentence) {
  EXPECT_THAT(
      [] {
        ct::tasks::seqeval({{"O"}, {"O", "O"}}, {{"O"}, {"O"}});
      },
      testing::ThrowsMessage<ct::Error>(testing::HasSubstr("sentence 1 has 2 predicted tags for 1")));
  EXPECT_THAT(
      [] {
        ct::tasks::seqeval({{"O"}}, {{"O"}, {"O"}});
      },
      testing::ThrowsMessage<ct::Error>(testing::HasSubstr("1 predicted sentences for 2")));
  EXPECT_THAT([] { ct::tasks::seqeval({{""}}, {{"O"}}); },
              testing::ThrowsMessage<ct::Error>(testing::HasSubstr("an empty tag at token 0")));
}

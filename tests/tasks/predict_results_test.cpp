// The prediction files of run_glue / run_classification / run_ner, against what their Python writes (the
// expected strings below are Python 3.11's repr() and f"{x:3.3f}" of the same values).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "tasks/sequence_classification/predict_results.h"
#include "tasks/token_classification/ner_labels.h"

TEST(PredictResults, ClassesRegressionAndMultiLabelLinesAsTheScriptsWriteThem) {
  const std::vector<std::string> labels{"not_equivalent", "equivalent"};
  EXPECT_EQ("index\tprediction\n0\tequivalent\n1\tnot_equivalent\n",
            ct::tasks::predict_results_classes(std::vector<int64_t>{1, 0}, labels));
  EXPECT_EQ("index\tprediction\n0\t1.235\n1\t-0.001\n2\t12345.500\n3\t0.062\n4\t2.062\n",
            ct::tasks::predict_results_regression(
                std::vector<float>{1.23456f, -0.0005f, 12345.5f, 0.0625f, 2.0625f}));
  const std::vector<std::string> tags{"a", "it's", "say \"hi\""};
  EXPECT_EQ("index\tprediction\n0\t['a', \"it's\"]\n1\t[]\n2\t['say \"hi\"']\n",
            ct::tasks::predict_results_multilabel(std::vector<int64_t>{1, 1, 0, 0, 0, 0, 0, 0, 1}, tags));
  EXPECT_THAT(
      [&] { ct::tasks::predict_results_classes(std::vector<int64_t>{2}, labels); },
      testing::ThrowsMessage<ct::Error>(testing::HasSubstr("prediction 0 is label id 2 (expected 0..1)")));
}

TEST(PredictResults, FileNamesAndPythonRepr) {
  EXPECT_EQ("predict_results_mrpc.txt", ct::tasks::glue_predict_file_name("mrpc"));
  EXPECT_EQ("predict_results_None.txt", ct::tasks::glue_predict_file_name(""));
  EXPECT_EQ("'both \\' \"'", ct::tasks::python_str_repr("both ' \""));
  EXPECT_EQ("'tab\\there'", ct::tasks::python_str_repr("tab\there"));
  EXPECT_EQ("'back\\\\slash'", ct::tasks::python_str_repr("back\\slash"));
  EXPECT_EQ("'\\x01é'", ct::tasks::python_str_repr("\x01\xc3\xa9"));
}

TEST(PredictResults, NerPredictionsAreOneLineOfTagsPerSentence) {
  EXPECT_EQ("B-PER I-PER O\n\nO\n", ct::tasks::ner_predictions_text({{"B-PER", "I-PER", "O"}, {}, {"O"}}));
}

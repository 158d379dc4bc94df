// run_ner.py's tokenize_and_align_labels and compute_metrics, worked by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "tasks/token_classification/ner_labels.h"

using testing::ElementsAre;

namespace {
const std::vector<std::string> kLabels{"O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-MISC"};
}

TEST(NerLabels, BToIMapsEachBeginLabelToItsInsideLabelWhenTheListHasOne) {
  EXPECT_THAT(ct::tasks::b_to_i_labels(kLabels), ElementsAre(0, 2, 2, 4, 4, 5));  // no I-MISC: B-MISC stays
}

TEST(NerLabels, FirstSubTokenCarriesTheWordLabel) {
  // [CLS] Jo ##hn lives in Ber ##li ##n [SEP]
  const std::vector<int64_t> word_ids{-1, 0, 0, 1, 2, 3, 3, 3, -1};
  const std::vector<int64_t> words{1, 0, 0, 3};  // B-PER O O B-LOC
  const auto b_to_i = ct::tasks::b_to_i_labels(kLabels);
  EXPECT_THAT(ct::tasks::align_labels_with_tokens(word_ids, words, false, b_to_i),
              ElementsAre(-100, 1, -100, 0, 0, 3, -100, -100, -100));
  EXPECT_THAT(ct::tasks::align_labels_with_tokens(word_ids, words, true, b_to_i),
              ElementsAre(-100, 1, 2, 0, 0, 3, 4, 4, -100));
  EXPECT_THAT(
      [&] {
        ct::tasks::align_labels_with_tokens(word_ids, std::vector<int64_t>{1, 0}, false, b_to_i);
      },
      testing::ThrowsMessage<ct::Error>(
          testing::HasSubstr("token 4 belongs to word 2 but the example has 2")));
}

TEST(NerLabels, ScoringDropsIgnoredPositionsAndNamesTheLabels) {
  const auto pairs = ct::tasks::tags_for_scoring({{0, 1, 2, 0, 3}}, {{-100, 1, -100, 0, 3}}, kLabels);
  EXPECT_THAT(pairs.predictions, ElementsAre(ElementsAre("B-PER", "O", "B-LOC")));
  EXPECT_THAT(pairs.references, ElementsAre(ElementsAre("B-PER", "O", "B-LOC")));
  EXPECT_THAT([&] { ct::tasks::tags_for_scoring({{9}}, {{0}}, kLabels); },
              testing::ThrowsMessage<ct::Error>(testing::HasSubstr("row 0 has label id 9 (expected 0..5)")));
}

TEST(NerLabels, ResultKeysAreRunNersOwn) {
  const auto scores = ct::tasks::seqeval({{"B-PER", "O", "B-LOC"}}, {{"B-PER", "O", "O"}});
  std::vector<std::string> names;
  for (const auto& m : ct::tasks::ner_metrics(scores, false)) names.push_back(m.name);
  EXPECT_THAT(names, ElementsAre("precision", "recall", "f1", "accuracy"));
  names.clear();
  const auto entity = ct::tasks::ner_metrics(scores, true);
  for (const auto& m : entity) names.push_back(m.name);
  EXPECT_THAT(names, ElementsAre("LOC_precision", "LOC_recall", "LOC_f1", "LOC_number", "PER_precision",
                                 "PER_recall", "PER_f1", "PER_number", "overall_precision", "overall_recall",
                                 "overall_f1", "overall_accuracy"));
  EXPECT_TRUE(entity[3].integer);
  EXPECT_DOUBLE_EQ(0.5, entity[8].value);  // 1 of 2 predicted chunks is right
}

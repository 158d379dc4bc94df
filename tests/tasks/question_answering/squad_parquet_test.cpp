// SQuAD from Parquet (the Hub's rajpurkar/squad layout): the committed fixture written by parquet-wasm, its
// multi-answer and unanswerable rows, and a file without SQuAD's columns.
#include <gtest/gtest.h>

#include "../../data/test_util.h"
#include "tasks/question_answering/squad.h"

namespace ct::tasks {
namespace {

const std::string kFixtures = std::string(CORETRAIN_SOURCE_DIR) + "/tests/parquet/data/";

TEST(SquadParquet, ReadsRowsAsExamples) {
  SquadReadStats stats;
  const auto ex = read_squad(kFixtures + "squad.parquet", &stats);
  ASSERT_EQ(ex.size(), 40u);
  EXPECT_EQ(stats.skipped, 0);
  EXPECT_EQ(ex[0].id, "5733be284776f41900661182");
  EXPECT_EQ(ex[0].title, "University_of_Notre_Dame");
  ASSERT_EQ(ex[0].answers.size(), 1u);
  EXPECT_EQ(ex[0].answers[0].start_char, 0);
  EXPECT_EQ(ex[0].answers[0].text, "Archi");
  EXPECT_EQ(ex[1].answers.size(), 3u);  // validation-style rows carry several answers
  EXPECT_EQ(ex[1].title, "Beyoncé");
  EXPECT_TRUE(ex[9].answers.empty());  // SQuAD v2's unanswerable: empty lists
  // Byte offsets into the UTF-8 context: "Beyoncé" is before the answers in row 1's context.
  const Answer& a = ex[1].answers[0];
  EXPECT_EQ(ex[1].context.substr(static_cast<size_t>(a.begin), a.text.size()), a.text);
}

TEST(SquadParquet, MissingColumnsNamed) {
  data::testing::expect_error([] { read_squad(kFixtures + "conll.parquet"); },
                              {"conll.parquet: Parquet file lacks SQuAD column(s) context, question, answers",
                               "it has id, tokens, pos_tags, chunk_tags, ner_tags"});
}

}  // namespace
}  // namespace ct::tasks

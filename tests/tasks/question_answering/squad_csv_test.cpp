// SQuAD as CSV, as run_qa's load_dataset("csv") reads it: the answers column as pandas writes HF's struct,
// the same examples as the flat JSON form, missing columns named, answers optional for --test_file.
#include <gtest/gtest.h>

#include "../../data/test_util.h"
#include "tasks/question_answering/squad.h"

namespace ct::tasks {
namespace {

using data::testing::expect_error;
using data::testing::TempDir;

const char* kCsv =
    "id,title,context,question,answers\n"
    "q1,T,\"The cat sat, quietly, on the mat.\",Where did the cat sit?,\"{'text': ['on the mat'], "
    "'answer_start': [22]}\"\n"
    "q2,T,\"He said \"\"héllo\"\" twice\nthen left.\",What did he say?,\"{'text': ['\"\"héllo\"\"'], "
    "'answer_start': [8]}\"\n"
    "q3,T,No answer here.,Why?,\"{'text': [], 'answer_start': []}\"\n";

TEST(SquadCsv, SameExamplesAsFlatJson) {
  TempDir dir;
  SquadReadStats stats;
  const auto ex = read_squad(dir.write("train.csv", kCsv), &stats);
  ASSERT_EQ(ex.size(), 3u);
  EXPECT_EQ(stats.skipped, 0);
  EXPECT_EQ(ex[0].context, "The cat sat, quietly, on the mat.");
  EXPECT_EQ(ex[0].answers[0].begin, 22);
  EXPECT_EQ(ex[1].context, "He said \"héllo\" twice\nthen left.");
  ASSERT_EQ(ex[1].answers.size(), 1u);
  EXPECT_EQ(ex[1].answers[0].text, "\"héllo\"");
  EXPECT_EQ(ex[1].answers[0].begin, 8);
  EXPECT_TRUE(ex[2].answers.empty());
  const char* jsonl =
      "{\"id\":\"q1\",\"title\":\"T\",\"context\":\"The cat sat, quietly, on the mat.\",\"question\":\"Where "
      "did the "
      "cat sit?\",\"answers\":{\"text\":[\"on the mat\"],\"answer_start\":[22]}}\n"
      "{\"id\":\"q2\",\"title\":\"T\",\"context\":\"He said \\\"héllo\\\" twice\\nthen "
      "left.\",\"question\":\"What "
      "did he say?\",\"answers\":{\"text\":[\"\\\"héllo\\\"\"],\"answer_start\":[8]}}\n"
      "{\"id\":\"q3\",\"title\":\"T\",\"context\":\"No answer "
      "here.\",\"question\":\"Why?\",\"answers\":{\"text\":[],"
      "\"answer_start\":[]}}\n";
  const auto js = read_squad(dir.write("train.jsonl", jsonl));
  ASSERT_EQ(js.size(), ex.size());
  for (size_t i = 0; i < js.size(); ++i) {
    EXPECT_EQ(js[i].id, ex[i].id);
    EXPECT_EQ(js[i].context, ex[i].context);
    EXPECT_EQ(js[i].question, ex[i].question);
    ASSERT_EQ(js[i].answers.size(), ex[i].answers.size());
    for (size_t k = 0; k < js[i].answers.size(); ++k)
      EXPECT_EQ(js[i].answers[k].begin, ex[i].answers[k].begin);
  }
}

TEST(SquadCsv, MissingColumnsAndBadRows) {
  TempDir dir;
  const auto p = dir.write("dev.csv", "id,context,question\nq1,c,q\n");
  expect_error([&] { read_squad(p); },
               {"dev.csv: CSV missing column(s) answers", "header: id,context,question"});
  const auto p2 = dir.write("x.csv", "id,context\nq1,c\n");
  expect_error([&] { read_squad(p2); }, {"missing column(s) question, answers"});
  const auto p3 = dir.write("y.csv", "id,context,question,answers\nq1,c,q\n");
  expect_error([&] { read_squad(p3); }, {"y.csv: row 1: 3 fields, the header has 4"});
  const auto p4 = dir.write("z.csv", "id,context,question,answers\nq1,c,q,{'text': [1\n");
  expect_error([&] { read_squad(p4); }, {"z.csv: row 1 (id \"q1\") answers"});
}

TEST(SquadCsv, AnswersOptionalForPrediction) {
  TempDir dir;
  const auto p = dir.write("test.csv", "id,title,context,question\nq1,T,Some text.,What?\n");
  SquadReadStats stats;
  const auto ex = read_squad(p, &stats, /*answers_optional=*/true);
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_EQ(stats.without_answers, 1);
  EXPECT_TRUE(ex[0].answers.empty());
  // JSON lines and nested files without answers too
  const auto jl = dir.write("test.jsonl", "{\"id\":\"a\",\"context\":\"c\",\"question\":\"q\"}\n");
  EXPECT_EQ(read_squad(jl, &stats, true).size(), 1u);
  EXPECT_EQ(stats.without_answers, 1);
  const auto nested = dir.write(
      "test.json",
      R"({"version":"1.1","data":[{"title":"t","paragraphs":[{"context":"c","qas":[{"id":"a","question":"q"}]}]}]})");
  EXPECT_EQ(read_squad(nested, &stats, true).size(), 1u);
  EXPECT_EQ(stats.without_answers, 1);
  expect_error([&] { read_squad(nested); }, {"missing field 'answers'"});
}

}  // namespace
}  // namespace ct::tasks

// CSV as run_qa's load_dataset("csv") reads it: RFC 4180 quoting (commas, doubled quotes, line breaks inside
// fields, CRLF, BOM), the answers column as pandas writes HF's struct (a Python dict repr, lists or numpy
// arrays), the same examples as the flat JSON form, missing columns named, answers optional for --test_file.
#include "data/csv.h"

#include <gtest/gtest.h>

#include "tasks/question_answering/squad.h"
#include "test_util.h"

namespace ct::data {
namespace {

using testing::expect_error;
using testing::TempDir;

TEST(Csv, QuotesCommasNewlines) {
  const auto rows = parse_csv(
      "\xEF\xBB\xBFid,text\r\n1,\"a, b\"\r\n2,\"say \"\"hi\"\"\"\n3,\"two\nlines\"\n4,\n\"\",plain\n",
      "t.csv");
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"id", "text"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"1", "a, b"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"2", "say \"hi\""}));
  EXPECT_EQ(rows[3], (std::vector<std::string>{"3", "two\nlines"}));
  EXPECT_EQ(rows[4], (std::vector<std::string>{"4", ""}));
  EXPECT_EQ(rows[5], (std::vector<std::string>{"", "plain"}));
}

TEST(Csv, NoTrailingNewlineAndBlankLines) {
  const auto rows = parse_csv("a,b\n\n1,2", "t.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1], (std::vector<std::string>{"1", "2"}));
}

TEST(Csv, Errors) {
  expect_error([] { parse_csv("a,b\n1,\"open\n", "t.csv"); }, {"t.csv: line 2: unterminated quoted field"});
  expect_error([] { parse_csv("a,b\n1,\"x\"y\n", "t.csv"); }, {"t.csv: line 2: unexpected character"});
}

TEST(Csv, PythonAnswersDict) {
  auto j = parse_python_literal(
      "{'text': ['Denver Broncos', \"it's\", 'a\\\\b \\'q\\' \\xe9'], 'answer_start': [177, 5, 0]}",
      "answers");
  ASSERT_EQ(j["text"].size(), 3u);
  EXPECT_EQ(j["text"][0], "Denver Broncos");
  EXPECT_EQ(j["text"][1], "it's");
  EXPECT_EQ(j["text"][2], "a\\b 'q' \xC3\xA9");
  EXPECT_EQ(j["answer_start"][0], 177);
  // numpy arrays, as datasets' to_csv writes them through pandas
  j = parse_python_literal(
      "{'text': array(['x', 'y'], dtype=object), 'answer_start': array([1, 2], dtype=int32)}", "answers");
  EXPECT_EQ(j["text"][1], "y");
  EXPECT_EQ(j["answer_start"][1], 2);
  j = parse_python_literal("{'text': [], 'answer_start': []}", "answers");
  EXPECT_TRUE(j["text"].empty());
  expect_error([] { parse_python_literal("{'text': ['x'", "row 3 answers"); }, {"row 3 answers: "});
  expect_error([] { parse_python_literal("{'text': []} junk", "answers"); }, {"trailing characters"});
}

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
}  // namespace ct::data

// CSV as datasets' load_dataset("csv") reads it: RFC 4180 quoting (commas, doubled quotes, line breaks inside
// fields, CRLF, BOM), and Python literals as pandas writes HF's structs (a dict repr, lists or numpy arrays).
// SQuAD's CSV form: tests/tasks/question_answering/squad_csv_test.cpp.
#include "data/csv.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ct::data

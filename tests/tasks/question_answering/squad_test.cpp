// Reading SQuAD files: nested v1.1/v2.0, the flat HF form, JSON lines; code-point answer_start to bytes;
// mismatching answers skipped and counted; every malformed input a one-line error naming file, record, field.
#include "tasks/question_answering/squad.h"

#include <gtest/gtest.h>

#include "../../data/test_util.h"

namespace ct::tasks {
namespace {

using data::testing::expect_error;
using data::testing::TempDir;

const char* kNested = R"({"version": "1.1", "data": [
  {"title": "T1", "paragraphs": [
    {"context": "The cat sat on the mat.", "qas": [
      {"id": "q1", "question": "Where did the cat sit?", "answers": [{"text": "on the mat", "answer_start": 12},
                                                                     {"text": "the mat", "answer_start": 15}]},
      {"id": "q2", "question": "Who sat?", "answers": [{"text": "The cat", "answer_start": 0}]}]},
    {"context": "Dogs bark.", "qas": [{"id": "q3", "question": "What do dogs do?",
                                     "answers": [{"text": "bark", "answer_start": 5}]}]}]}]})";

TEST(Squad, ReadsNestedV1) {
  TempDir dir;
  SquadReadStats stats;
  auto ex = read_squad(dir.write("train.json", kNested), &stats);
  ASSERT_EQ(ex.size(), 3u);
  EXPECT_EQ(stats.total, 3);
  EXPECT_EQ(stats.skipped, 0);
  EXPECT_EQ(ex[0].id, "q1");
  EXPECT_EQ(ex[0].title, "T1");
  EXPECT_EQ(ex[0].context, "The cat sat on the mat.");
  EXPECT_EQ(ex[0].question, "Where did the cat sit?");
  ASSERT_EQ(ex[0].answers.size(), 2u);
  EXPECT_EQ(ex[0].answers[0].begin, 12);
  EXPECT_EQ(ex[0].answers[0].end, 22);
  EXPECT_EQ(ex[0].answers[1].start_char, 15);
  EXPECT_EQ(ex[2].context, "Dogs bark.");
  EXPECT_EQ(ex[2].answers[0].begin, 5);
  EXPECT_FALSE(ex[0].is_impossible);
}

TEST(Squad, ReadsNestedV2Impossible) {
  auto ex = parse_squad(R"({"version": "v2.0", "data": [{"title": "T", "paragraphs": [{"context": "abc def",
      "qas": [{"id": "a", "question": "x?", "answers": [], "is_impossible": true,
               "plausible_answers": [{"text": "def", "answer_start": 4}]},
              {"id": "b", "question": "y?", "answers": [{"text": "def", "answer_start": 4}],
               "is_impossible": false}]}]}]})",
                        "v2.json");
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_TRUE(ex[0].is_impossible);
  EXPECT_TRUE(ex[0].answers.empty());
  EXPECT_FALSE(ex[1].is_impossible);
  EXPECT_EQ(ex[1].answers[0].begin, 4);
}

TEST(Squad, ReadsFlatForm) {
  auto ex = parse_squad(R"({"data": [
      {"id": "f1", "title": "T", "context": "red green blue", "question": "  Which?",
       "answers": {"text": ["green", "blue"], "answer_start": [4, 10]}},
      {"id": "f2", "context": "nothing here", "question": "None?", "answers": {"text": [], "answer_start": []}}]})",
                        "flat.json");
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0].title, "T");
  EXPECT_EQ(ex[0].question, "  Which?");
  ASSERT_EQ(ex[0].answers.size(), 2u);
  EXPECT_EQ(ex[0].answers[1].begin, 10);
  EXPECT_EQ(ex[1].title, "");
  EXPECT_TRUE(ex[1].answers.empty());
  EXPECT_TRUE(ex[1].is_impossible);
}

TEST(Squad, ReadsJsonLines) {
  TempDir dir;
  const std::string p = dir.write(
      "train.jsonl",
      "{\"id\": \"l1\", \"context\": \"one two\", \"question\": \"q\", \"answers\": {\"text\": [\"two\"], "
      "\"answer_start\": [4]}}\n\n"
      "{\"id\": \"l2\", \"context\": \"three\", \"question\": \"q\", \"answers\": {\"text\": [\"three\"], "
      "\"answer_start\": [0]}}\n");
  auto ex = read_squad(p);
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0].id, "l1");
  EXPECT_EQ(ex[1].answers[0].text, "three");
  // One record on one line is a JSON lines file too.
  auto one = parse_squad(
      R"({"id": 7, "context": "x y", "question": "q", "answers": {"text": ["y"], "answer_start": [2]}})",
      "one.jsonl");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].id, "7");
}

TEST(Squad, AnswerStartIsCodePointsNotBytes) {
  // "😀" is one Python index (4 bytes), "ï"/"é" one index (2 bytes) each.
  const std::string context =
      "na\xC3\xAFve caf\xC3\xA9 \xF0\x9F\x98\x80 \xC3\xBC"
      "ber end";
  // code points: n a ï v e _ c a f é _ 😀 _ ü b e r _ e n d ; "über" starts at index 13, "end" at 18
  const std::string json = std::string(R"({"data": [{"title": "u", "paragraphs": [{"context": ")") + context +
                           R"(", "qas": [{"id": "u1", "question": "q", "answers": [{"text": ")" +
                           "\xC3\xBC"
                           "ber" +
                           R"(", "answer_start": 13}]}, {"id": "u2", "question": "q",
                           "answers": [{"text": "end", "answer_start": 18}]}]}]}]})";
  SquadReadStats stats;
  auto ex = parse_squad(json, "u.json", &stats);
  ASSERT_EQ(ex.size(), 2u) << "skipped " << stats.skipped;
  EXPECT_EQ(ex[0].answers[0].begin, 18);  // 6 + 1 + 5 + 1 + 4 + 1 bytes before "über"
  EXPECT_EQ(ex[0].answers[0].end, 23);
  EXPECT_EQ(context.substr(18, 5),
            "\xC3\xBC"
            "ber");
  EXPECT_EQ(ex[1].answers[0].begin, 24);
  EXPECT_EQ(context.substr(24), "end");
}

TEST(Squad, MismatchedAnswersAreSkippedAndCounted) {
  auto ex_text = R"({"data": [{"title": "t", "paragraphs": [{"context": "alpha beta gamma", "qas": [
      {"id": "ok", "question": "q", "answers": [{"text": "beta", "answer_start": 6}]},
      {"id": "shifted", "question": "q", "answers": [{"text": "beta", "answer_start": 5}]},
      {"id": "second", "question": "q", "answers": [{"text": "beta", "answer_start": 6}, {"text": "gamma", "answer_start": 3}]},
      {"id": "past_end", "question": "q", "answers": [{"text": "gamma!", "answer_start": 11}]},
      {"id": "negative", "question": "q", "answers": [{"text": "alpha", "answer_start": -1}]},
      {"id": "beyond", "question": "q", "answers": [{"text": "x", "answer_start": 99}]}]}]}]})";
  SquadReadStats stats;
  auto ex = parse_squad(ex_text, "m.json", &stats);
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_EQ(ex[0].id, "ok");
  EXPECT_EQ(stats.total, 6);
  EXPECT_EQ(stats.skipped, 5);
}

TEST(Squad, KeepFirst) {
  std::vector<int> v = {1, 2, 3, 4};
  keep_first(v, -1);
  EXPECT_EQ(v.size(), 4u);
  keep_first(v, 10);
  EXPECT_EQ(v.size(), 4u);
  keep_first(v, 2);
  EXPECT_EQ(v, (std::vector<int>{1, 2}));
  keep_first(v, 0);
  EXPECT_TRUE(v.empty());
}

TEST(Squad, Utf8Offsets) {
  auto o = utf8_codepoint_offsets("a\xC3\xA9\xF0\x9F\x98\x80", "s");
  EXPECT_EQ(o, (std::vector<int64_t>{0, 1, 3, 7}));
  expect_error([] { utf8_codepoint_offsets("a\xC3", "ctx"); }, {"ctx", "invalid UTF-8", "byte 1"});
  expect_error([] { utf8_codepoint_offsets("\xFF", "ctx"); }, {"invalid UTF-8"});
}

std::string qa_with(const std::string& qa_fields) {
  return R"({"data": [{"title": "t", "paragraphs": [{"context": "abc", "qas": [)" + qa_fields + "]}]}]}";
}

TEST(Squad, BadInputs) {
  TempDir dir;
  expect_error([&] { read_squad(dir.path() + "/missing.json"); }, {"missing.json", "cannot open"});
  expect_error([&] { read_squad(dir.path()); }, {"is a directory"});
  expect_error([] { parse_squad("{\"data\": [", "bad.json"); }, {"bad.json", "malformed JSON"});
  expect_error([] { parse_squad("", "empty.json"); }, {"empty.json", "malformed JSON"});
  expect_error([] { parse_squad("42", "n.json"); }, {"n.json", "expected a JSON object"});
  expect_error([] { parse_squad(R"({"version": "1.1"})", "nodata.json"); }, {"nodata.json", "\"data\""});
  expect_error([] { parse_squad(R"({"data": {}})", "d.json"); }, {"d.json", "'data' must be an array"});
  expect_error([] { parse_squad(R"({"data": [{"title": "t", "paragraphs": {}}]})", "p.json"); },
               {"p.json: data[0]", "'paragraphs' must be an array"});
  expect_error([] { parse_squad(R"({"data": [{"title": 3, "paragraphs": []}]})", "t.json"); },
               {"data[0]", "'title' must be a string, got integer"});
  expect_error([] { parse_squad(R"({"data": [{"paragraphs": [{"qas": []}]}]})", "c.json"); },
               {"c.json: data[0].paragraphs[0]", "missing field 'context'"});
  expect_error([] { parse_squad(R"({"data": [{"paragraphs": [{"context": 5, "qas": []}]}]})", "c.json"); },
               {"data[0].paragraphs[0]", "'context' must be a string"});
  expect_error([] { parse_squad(R"({"data": [{"paragraphs": [{"context": "x", "qas": 1}]}]})", "c.json"); },
               {"'qas' must be an array"});
  expect_error([] { parse_squad(qa_with(R"({"question": "q", "answers": []})"), "i.json"); },
               {"i.json: data[0].paragraphs[0].qas[0]", "missing field 'id'"});
  expect_error([] { parse_squad(qa_with(R"({"id": [1], "question": "q", "answers": []})"), "i.json"); },
               {"'id' must be a string, got array"});
  expect_error([] { parse_squad(qa_with(R"({"id": "x1", "question": 1, "answers": []})"), "q.json"); },
               {"qas[0] (id \"x1\")", "'question' must be a string, got integer"});
  expect_error([] { parse_squad(qa_with(R"({"id": "x1", "question": "q"})"), "q.json"); },
               {"(id \"x1\")", "missing field 'answers'"});
  expect_error([] { parse_squad(qa_with(R"({"id": "x1", "question": "q", "answers": "abc"})"), "q.json"); },
               {"'answers' must be an array, got string"});
  expect_error([] { parse_squad(qa_with(R"({"id": "x1", "question": "q", "answers": [3]})"), "q.json"); },
               {"'answers[0]' must be an object"});
  expect_error(
      [] {
        parse_squad(
            qa_with(R"({"id": "x1", "question": "q", "answers": [{"text": "a", "answer_start": "0"}]})"),
            "s.json");
      },
      {"s.json", "(id \"x1\")", "'answers[0].answer_start' must be an integer, got string"});
  expect_error(
      [] {
        parse_squad(
            qa_with(R"({"id": "x1", "question": "q", "answers": [{"text": "a", "answer_start": 0.5}]})"),
            "s.json");
      },
      {"'answers[0].answer_start' must be an integer, got float"});
  expect_error(
      [] {
        parse_squad(qa_with(R"({"id": "x1", "question": "q", "answers": [{"answer_start": 0}]})"), "s.json");
      },
      {"missing field 'text'"});
  expect_error(
      [] {
        parse_squad(
            qa_with(R"({"id": "x1", "question": "q", "answers": [{"text": null, "answer_start": 0}]})"),
            "s.json");
      },
      {"'answers[0].text' must be a string, got null"});
  expect_error(
      [] {
        parse_squad(qa_with(R"({"id": "x1", "question": "q", "answers": [], "is_impossible": "yes"})"),
                    "s.json");
      },
      {"'is_impossible' must be a boolean"});
  expect_error([] { parse_squad(qa_with("7"), "s.json"); }, {"qas[0]", "expected an object, got integer"});
  // Flat records.
  expect_error(
      [] {
        parse_squad(R"({"data": [{"id": "f", "context": "c", "question": "q", "answers": []}]})", "f.json");
      },
      {"f.json: data[0] (id \"f\")", "'answers' must be an object"});
  expect_error(
      [] {
        parse_squad(
            R"({"data": [{"id": "f", "context": "c", "question": "q", "answers": {"text": ["c"], "answer_start": []}}]})",
            "f.json");
      },
      {"(id \"f\")", "1 texts but 0 answer_start"});
  expect_error(
      [] {
        parse_squad(
            R"({"data": [{"id": "f", "context": "c", "question": "q", "answers": {"text": [1], "answer_start": [0]}}]})",
            "f.json");
      },
      {"'answers.text[0]' must be a string"});
  expect_error(
      [] {
        parse_squad(
            R"({"data": [{"id": "f", "context": "c", "question": "q", "answers": {"text": ["c"], "answer_start": [true]}}]})",
            "f.json");
      },
      {"'answers.answer_start[0]' must be an integer, got boolean"});
  expect_error(
      [] {
        parse_squad(
            R"({"data": [{"id": "f", "question": "q", "answers": {"text": [], "answer_start": []}}]})",
            "f.json");
      },
      {"missing field 'context'"});
  expect_error([] { parse_squad(R"({"data": ["x"]})", "f.json"); },
               {"f.json: data[0]", "expected an object, got string"});
  // JSON lines: the bad line is named.
  expect_error(
      [] {
        parse_squad(
            "{\"id\": \"a\", \"context\": \"c\", \"question\": \"q\", \"answers\": {\"text\": [], "
            "\"answer_start\": []}}\n"
            "{\"id\": \"b\", \"context\": \"c\"\n",
            "l.jsonl");
      },
      {"l.jsonl: line 2", "malformed JSON"});
  expect_error(
      [] {
        parse_squad(
            "{\"id\": \"a\", \"context\": \"c\", \"question\": \"q\", \"answers\": {\"text\": [], "
            "\"answer_start\": []}}\n"
            "{\"id\": \"b\", \"context\": \"c\", \"question\": 3, \"answers\": {\"text\": [], "
            "\"answer_start\": []}}\n",
            "l.jsonl");
      },
      {"l.jsonl: line 2 (id \"b\")", "'question' must be a string"});
}

}  // namespace
}  // namespace ct::tasks

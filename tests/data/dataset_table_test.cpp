// DatasetTable from each loader, with the typing rule each one inherits from the library datasets hands the
// format to: pandas.read_csv for csv (int / float / bool / string columns, NA strings, an int column with
// a hole is float), pyarrow's JSON reader and its pandas fallback for json (JSON lines, arrays of records,
// dicts of lists, field=), Python's line splitting for text, and HF features (ClassLabel names) from a
// Parquet footer. Column selection, several files into one split, every error as one line naming the flag
// and the file, and byte-mutated inputs that must end in a table or a ct::Error, never a crash.
#include "data/dataset_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <nlohmann/json.hpp>

#include "data/table_loaders.h"
#include "test_util.h"

namespace ct::data {
namespace {

using nlohmann::json;
using parquet::Value;
using testing::expect_error;
using testing::TempDir;

const std::string kFixtures = std::string(CORETRAIN_SOURCE_DIR) + "/tests/parquet/data/";

json cell_json(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Null:
      return nullptr;
    case Value::Kind::Bool:
      return v.i != 0;
    case Value::Kind::Int:
      return v.i;
    case Value::Kind::Double:
      return v.d;
    case Value::Kind::String:
      return v.s;
    case Value::Kind::List: {
      json a = json::array();
      for (const auto& item : v.items) a.push_back(cell_json(item));
      return a;
    }
    case Value::Kind::Struct: {
      json o = json::object();
      for (size_t k = 0; k < v.keys.size(); ++k) o[v.keys[k]] = cell_json(v.items[k]);
      return o;
    }
  }
  return nullptr;
}

json col(const DatasetTable& t, const std::string& name) {
  json a = json::array();
  for (const auto& v : t.column(name)) a.push_back(cell_json(v));
  return a;
}

// The one kind of a column's non-null cells ("int", "double", ...), "null" when all are null, "mixed" else;
// json's == compares 1 and 1.0 equal, so kinds are checked apart.
std::string kind(const DatasetTable& t, const std::string& name) {
  static const char* names[] = {"null", "bool", "int", "double", "string", "list", "struct"};
  std::string k = "null";
  for (const auto& v : t.column(name)) {
    if (v.is_null()) continue;
    const std::string this_kind = names[static_cast<int>(v.kind)];
    if (k == "null") {
      k = this_kind;
    } else if (k != this_kind) {
      return "mixed";
    }
  }
  return k;
}

DatasetTable read(const TempDir& dir, const std::string& name, const std::string& content,
                  const TableReadOptions& options = {}) {
  return read_table_files({dir.write(name, content)}, "--train_file", options);
}

// ---------------------------------------------------------------------------------------------- loader_for

TEST(LoaderFor, ExtensionsAsDatasetsMapsThem) {
  EXPECT_EQ(loader_for("a/train.csv", "--train_file"), "csv");
  EXPECT_EQ(loader_for("train.CSV", "--train_file"), "csv");
  EXPECT_EQ(loader_for("train.json", "--train_file"), "json");
  EXPECT_EQ(loader_for("train.jsonl", "--train_file"), "json");
  EXPECT_EQ(loader_for("wiki.txt", "--train_file"), "text");
  EXPECT_EQ(loader_for("data/train-00000-of-00001.parquet", "--train_file"), "parquet");
}

TEST(LoaderFor, OthersRefusedNamingFlagAndFile) {
  expect_error([] { loader_for("dev.tsv", "--validation_file"); },
               {"--validation_file dev.tsv: a .tsv file is tab-separated", "expected a .csv, .json"});
  expect_error(
      [] { loader_for("train.xml", "--train_file"); },
      {"--train_file train.xml: unsupported extension '.xml'; expected a .csv, .json, .jsonl, .txt or "
       ".parquet file"});
  expect_error([] { loader_for("data.d/train", "--train_file"); }, {"--train_file data.d/train", "'(none)'"});
  expect_error([] { loader_for("train.csv.gz", "--train_file"); }, {"'.gz'"});
}

// --------------------------------------------------------------------------------------------------- csv

TEST(CsvTable, GlueLike) {
  TempDir dir;
  const auto t =
      read(dir, "train.csv",
           "sentence1,sentence2,label\n"
           "\"Amrozi accused his brother , whom he called \"\" the witness \"\" , of deliberately "
           "distorting his evidence .\",\"Referring to him as only \"\" the witness \"\" , Amrozi "
           "accused his brother of deliberately distorting his evidence .\",1\r\n"
           "Yucaipa owned Dominick 's before selling the chain to Safeway in 1998 for $ 2.5 billion .,"
           "\"Yucaipa bought Dominick 's in 1995 for $ 693 million and sold it to Safeway for $ 1.8 "
           "billion in 1998 .\",0\r\n");
  ASSERT_EQ(t.num_rows(), 2);
  EXPECT_EQ(t.table.names, (std::vector<std::string>{"sentence1", "sentence2", "label"}));
  EXPECT_EQ(kind(t, "sentence1"), "string");
  EXPECT_EQ(kind(t, "label"), "int");
  EXPECT_EQ(col(t, "label"), json::parse("[1, 0]"));
  EXPECT_EQ(t.column("sentence1")[0].s,
            "Amrozi accused his brother , whom he called \" the witness \" , of deliberately distorting his "
            "evidence .");
  EXPECT_EQ(
      t.column("sentence2")[1].s,
      "Yucaipa bought Dominick 's in 1995 for $ 693 million and sold it to Safeway for $ 1.8 billion in "
      "1998 .");
  EXPECT_FALSE(t.features.has_value());  // csv records no features
  EXPECT_TRUE(t.class_names("label").empty());
  EXPECT_EQ(t.source, dir.path() + "/train.csv");
}

// pandas.read_csv's _infer_types, column by column.
TEST(CsvTable, PandasTyping) {
  TempDir dir;
  const auto t = read(dir, "t.csv",
                      "i,f,b,s,hole,all_na,mixed,spaced,big,hexa,exp,inf,bool_na\n"
                      "1,1.5,True,a,1,,1,  7 ,9223372036854775807,0x10,1e3,inf,tRuE\n"
                      "-2,2,false,,,NA,True, -8,9223372036854775808,1,2E-2,-Infinity,\n"
                      "+3,.5,TRUE,None,3,nan,x,9,0,2,3.,1,FALSE\n");
  ASSERT_EQ(t.num_rows(), 3);
  EXPECT_EQ(kind(t, "i"), "int");
  EXPECT_EQ(col(t, "i"), json::parse("[1, -2, 3]"));
  EXPECT_EQ(kind(t, "f"), "double");  // ints beside a float: float64
  EXPECT_EQ(col(t, "f"), json::parse("[1.5, 2.0, 0.5]"));
  EXPECT_EQ(kind(t, "b"), "bool");  // true / false in any case
  EXPECT_EQ(col(t, "b"), json::parse("[true, false, true]"));
  EXPECT_EQ(kind(t, "s"), "string");
  EXPECT_EQ(col(t, "s"), json::parse(R"(["a", null, null])"));  // "" and "None" are NA strings
  EXPECT_EQ(kind(t, "hole"), "double");                         // an int column with NaN is float64
  EXPECT_EQ(col(t, "hole"), json::parse("[1.0, null, 3.0]"));
  EXPECT_EQ(kind(t, "all_na"), "null");
  EXPECT_EQ(kind(t, "mixed"), "string");  // "1" and "True": object, the cells verbatim
  EXPECT_EQ(col(t, "mixed"), json::parse(R"(["1", "True", "x"])"));
  EXPECT_EQ(kind(t, "spaced"), "int");  // str_to_int64 skips spaces around the digits
  EXPECT_EQ(col(t, "spaced"), json::parse("[7, -8, 9]"));
  EXPECT_EQ(kind(t, "big"), "double");   // past int64
  EXPECT_EQ(kind(t, "hexa"), "string");  // no hex numbers in pandas
  EXPECT_EQ(kind(t, "exp"), "double");
  EXPECT_EQ(col(t, "exp"), json::parse("[1000.0, 0.02, 3.0]"));
  EXPECT_EQ(kind(t, "inf"), "double");
  EXPECT_TRUE(std::isinf(t.column("inf")[0].d) && t.column("inf")[0].d > 0);
  EXPECT_TRUE(std::isinf(t.column("inf")[1].d) && t.column("inf")[1].d < 0);
  EXPECT_EQ(kind(t, "bool_na"), "bool");  // object of bools and NaN: bool with a null in Arrow
  EXPECT_EQ(col(t, "bool_na"), json::parse("[true, null, false]"));
}

TEST(CsvTable, HeaderNamesShortRowsAndBlankLines) {
  TempDir dir;
  const auto t = read(dir, "t.csv", "a,a,,b\n1,2,3,4\n\n5,6\n");
  // mangle_dupe_cols and "Unnamed: k"; a short row is padded with NaN; blank lines are skipped.
  EXPECT_EQ(t.table.names, (std::vector<std::string>{"a", "a.1", "Unnamed: 2", "b"}));
  ASSERT_EQ(t.num_rows(), 2);
  EXPECT_EQ(col(t, "a.1"), json::parse("[2, 6]"));
  EXPECT_EQ(col(t, "b"), json::parse("[4.0, null]"));
  EXPECT_EQ(kind(t, "b"), "double");
}

TEST(CsvTable, HeaderOnlyIsEmptySplit) {
  TempDir dir;
  const auto t = read(dir, "t.csv", "\xEF\xBB\xBFsentence,label\n");
  EXPECT_EQ(t.num_rows(), 0);
  EXPECT_EQ(t.table.names, (std::vector<std::string>{"sentence", "label"}));
}

TEST(CsvTable, Errors) {
  TempDir dir;
  const std::string p = dir.path();
  expect_error([&] { read(dir, "long.csv", "a,b\n1,2\n1,2,3\n"); },
               {"--train_file " + p + "/long.csv: Expected 2 fields in line 3, saw 3"});
  // The record's first line in the file, past a quoted line break.
  expect_error([&] { read(dir, "nl.csv", "a,b\n\"x\ny\",2\n1,2,3\n"); },
               {"Expected 2 fields in line 4, saw 3"});
  expect_error([&] { read(dir, "empty.csv", ""); },
               {"--train_file " + p + "/empty.csv: No columns to parse from file"});
  expect_error([&] { read(dir, "quote.csv", "a,b\n1,\"open\n"); },
               {"--train_file " + p + "/quote.csv: line 2: unterminated quoted field"});
  expect_error([&] { read(dir, "latin1.csv", "a,b\ncaf\xE9,1\n"); },
               {"--train_file " + p + "/latin1.csv: line 2: invalid UTF-8 (byte 0xe9"});
  expect_error([&] { read_table_files({p + "/missing.csv"}, "--train_file"); },
               {"--train_file " + p + "/missing.csv: cannot open"});
}

// -------------------------------------------------------------------------------------------------- json

TEST(JsonTable, ConllLikeJsonLines) {
  TempDir dir;
  const auto t =
      read(dir, "train.json",
           R"({"id": "0", "tokens": ["EU", "rejects", "German", "call"], "ner_tags": [3, 0, 7, 0]})"
           "\n"
           R"({"id": "1", "tokens": ["Peter", "Blackburn"], "ner_tags": [1, 2]})"
           "\n");
  ASSERT_EQ(t.num_rows(), 2);
  EXPECT_EQ(t.table.names, (std::vector<std::string>{"id", "tokens", "ner_tags"}));
  EXPECT_EQ(kind(t, "tokens"), "list");
  EXPECT_EQ(col(t, "tokens")[0], json::parse(R"(["EU", "rejects", "German", "call"])"));
  EXPECT_EQ(col(t, "ner_tags"), json::parse("[[3, 0, 7, 0], [1, 2]]"));
  EXPECT_EQ(t.column("ner_tags")[1].items[0].kind, Value::Kind::Int);
  EXPECT_EQ(kind(t, "id"), "string");
}

TEST(JsonTable, JsonLinesColumnsTypesAndNesting) {
  TempDir dir;
  const auto t = read(dir, "t.jsonl",
                      "{\"a\": 1, \"b\": {\"x\": 1}}\r\n"
                      "\n"
                      "   \n"
                      "{\"c\": true, \"a\": 2.5, \"b\": {\"y\": \"s\"}, \"l\": [1, 2.5]}\n"
                      "{\"a\": null, \"l\": [[1], []], \"big\": 18446744073709551615}");
  ASSERT_EQ(t.num_rows(), 3);
  EXPECT_EQ(t.table.names, (std::vector<std::string>{"a", "b", "c", "l", "big"}));  // first seen
  EXPECT_EQ(kind(t, "a"), "double");  // 1 beside 2.5: pyarrow's float64
  EXPECT_EQ(col(t, "a"), json::parse("[1.0, 2.5, null]"));
  EXPECT_EQ(col(t, "c"), json::parse("[null, true, null]"));  // missing keys are null
  // Structs take every key any row has, in first-seen order.
  EXPECT_EQ(col(t, "b"), json::parse(R"([{"x": 1, "y": null}, {"x": null, "y": "s"}, null])"));
  EXPECT_EQ(t.column("b")[1].keys, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(t.column("l")[0].kind, Value::Kind::Null);
  EXPECT_EQ(t.column("l")[1].items[0].kind, Value::Kind::Int);  // [1, 2.5] beside [[1], []]: no one type
  EXPECT_EQ(kind(t, "big"), "double");
}

TEST(JsonTable, ListElementsUnify) {
  TempDir dir;
  const auto t = read(dir, "t.jsonl", "{\"l\": [1, 2]}\n{\"l\": [0.5]}\n");
  EXPECT_EQ(t.column("l")[0].items[0].kind, Value::Kind::Double);
  EXPECT_EQ(col(t, "l"), json::parse("[[1.0, 2.0], [0.5]]"));
}

TEST(JsonTable, OneLineDictOfListsIsOneRecord) {
  // pyarrow reads a one-line object as one row, lists and all (json.dump's output without indent).
  TempDir dir;
  const auto t = read(dir, "t.json", R"({"tokens": ["a", "b"], "tags": [0, 1]})");
  ASSERT_EQ(t.num_rows(), 1);
  EXPECT_EQ(col(t, "tokens"), json::parse(R"([["a", "b"]])"));
}

TEST(JsonTable, ArrayOfRecords) {
  TempDir dir;
  const auto t = read(dir, "t.json",
                      "[\n  {\"question\": \"q1\", \"label\": 0},\n  {\"label\": 1, \"question\": \"q2\", "
                      "\"extra\": [1]}\n]\n");
  ASSERT_EQ(t.num_rows(), 2);
  EXPECT_EQ(t.table.names, (std::vector<std::string>{"question", "label", "extra"}));
  EXPECT_EQ(col(t, "question"), json::parse(R"(["q1", "q2"])"));
  EXPECT_EQ(col(t, "extra"), json::parse("[null, [1]]"));
  // On one line too: pyarrow refuses a top-level array, the whole-file reading takes it.
  const auto one = read(dir, "one.json", R"([{"a": 1}, {"a": 2}])");
  EXPECT_EQ(col(one, "a"), json::parse("[1, 2]"));
  // Strings: one "text" column, as datasets names it.
  const auto strings = read(dir, "s.json", "[\"x\",\n \"y\"]");
  EXPECT_EQ(strings.table.names, (std::vector<std::string>{"text"}));
  EXPECT_EQ(col(strings, "text"), json::parse(R"(["x", "y"])"));
  EXPECT_EQ(read(dir, "empty.json", "[]").num_rows(), 0);
}

TEST(JsonTable, DictOfLists) {
  TempDir dir;
  const auto t =
      read(dir, "t.json",
           "{\n  \"sentence\": [\"a\", \"b\", \"c\"],\n  \"label\": [0, 1, 0.5],\n  \"tags\": [[1], "
           "[], [2, 3]]\n}\n");
  ASSERT_EQ(t.num_rows(), 3);
  EXPECT_EQ(t.table.names, (std::vector<std::string>{"sentence", "label", "tags"}));
  EXPECT_EQ(kind(t, "label"), "double");
  EXPECT_EQ(col(t, "tags"), json::parse("[[1], [], [2, 3]]"));
  expect_error([&] { read(dir, "ragged.json", "{\n \"a\": [1, 2, 3],\n \"b\": [1, 2]\n}"); },
               {"--train_file " + dir.path() +
                "/ragged.json: a dict of lists needs lists of one length: 'a' has 3 "
                "values, 'b' has 2"});
}

TEST(JsonTable, RecordsUnderOneMemberOrField) {
  TempDir dir;
  // The only member holding records needs no field.
  const auto t = read(dir, "t.json", "{\n  \"data\": [{\"a\": 1}, {\"a\": 2}]\n}\n");
  EXPECT_EQ(col(t, "a"), json::parse("[1, 2]"));
  // With field=, even a one-line file is one document, and other members are ignored.
  TableReadOptions opt;
  opt.field = "data";
  const auto f = read(dir, "f.json", R"({"version": "1.1", "data": [{"a": 1}, {"b": "x"}]})", opt);
  EXPECT_EQ(f.table.names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(col(f, "b"), json::parse(R"([null, "x"])"));
  const auto d = read(dir, "d.json", R"({"data": {"a": [1, 2], "b": [3, 4]}})", opt);
  EXPECT_EQ(col(d, "b"), json::parse("[3, 4]"));
  expect_error([&] { read(dir, "nf.json", R"({"version": "1.1", "rows": []})", opt); },
               {"--train_file " + dir.path() + "/nf.json: no field 'data' (fields: version, rows)"});
  expect_error([&] { read(dir, "sf.json", R"({"data": 3})", opt); },
               {"field 'data' holds a number, expected an array of records or a dict of lists"});
  expect_error([&] { read(dir, "af.json", R"([{"data": 3}])", opt); },
               {"records under field 'data' need a JSON object at the top level, found a JSON array"});
}

TEST(JsonTable, Errors) {
  TempDir dir;
  const std::string p = dir.path();
  expect_error([&] { read(dir, "bad.jsonl", "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3,,}\n"); },
               {"--train_file " + p + "/bad.jsonl: line 3: malformed JSON (syntax error"});
  expect_error([&] { read(dir, "bad1.jsonl", "{\"a\": 1,,}\n{\"a\": 2}\n"); },
               {"--train_file " + p + "/bad1.jsonl: line 1: malformed JSON"});
  expect_error([&] { read(dir, "pretty.json", "[\n  {\"a\": 1},\n  {\"a\": 2\n]\n"); },
               {"--train_file " + p + "/pretty.json: line 4: malformed JSON"});
  expect_error([&] { read(dir, "arr.jsonl", "{\"a\": 1}\n[1, 2]\n"); },
               {"--train_file " + p + "/arr.jsonl: line 2: expected a JSON object", "got array"});
  expect_error(
      [&] { read(dir, "rec.json", "[{\"a\": 1}, 2]"); },
      {"--train_file " + p + "/rec.json: records[1]: expected a record (a JSON object), got number"});
  expect_error([&] { read(dir, "empty.json", " \n"); },
               {"--train_file " + p + "/empty.json: no JSON records"});
  expect_error([&] { read(dir, "num.json", "3"); },
               {"expected JSON lines, an array of records or an object"});
  expect_error([&] { read(dir, "obj.json", "{\n \"a\": 1,\n \"b\": [1]\n}"); },
               {"neither a dict of lists nor an object holding an array of records (fields: a, b)"});
  expect_error([&] { read(dir, "utf.jsonl", "{\"a\": \"caf\xE9\"}\n"); }, {"line 1: malformed JSON"});
  // An unterminated string's "last read" token is the rest of the file: the message stays short.
  try {
    read(dir, "open.json", "[\n{\"a\": \"" + std::string(100000, 'x') + "}]");
    ADD_FAILURE() << "expected ct::Error";
  } catch (const ct::Error& e) {
    EXPECT_LT(std::string(e.what()).size(), 500u) << e.what();
    EXPECT_NE(std::string(e.what()).find("/open.json: line 2: malformed JSON ("), std::string::npos)
        << e.what();
  }
  expect_error(
      [&] { read(dir, "deep.jsonl", "{\"a\": " + std::string(300, '[') + std::string(300, ']') + "}"); },
      {"/deep.jsonl: line 1: values nested deeper than 256 levels"});
}

// -------------------------------------------------------------------------------------------------- text

TEST(TextTable, LinesWithAndWithoutBreaks) {
  TempDir dir;
  const std::string content = "first line\r\n\nthird\rfourth\x0c still fourth\nlast";
  const auto t = read(dir, "wiki.txt", content);
  EXPECT_EQ(t.table.names, (std::vector<std::string>{"text"}));
  // Universal newlines ("\r\n", "\r"), blank lines kept, no split at a form feed.
  EXPECT_EQ(col(t, "text"), json::parse(R"(["first line", "", "third", "fourth\f still fourth", "last"])"));
  TableReadOptions keep;
  keep.keep_linebreaks = true;
  const auto k = read(dir, "wiki2.txt", content, keep);
  EXPECT_EQ(col(k, "text"),
            json::parse(R"(["first line\n", "\n", "third\n", "fourth\f still fourth\n", "last"])"));
  // A final newline ends the last line, no empty row after it.
  EXPECT_EQ(col(read(dir, "nl.txt", "a\nb\n"), "text"), json::parse(R"(["a", "b"])"));
  EXPECT_EQ(read(dir, "empty.txt", "").num_rows(), 0);
  expect_error([&] { read(dir, "bin.txt", "ok\n\xFF\n"); },
               {"--train_file " + dir.path() + "/bin.txt: line 2: invalid UTF-8 (byte 0xff"});
}

// ----------------------------------------------------------------------------------------------- parquet

TEST(ParquetTable, ConllWithClassLabels) {
  const auto t = read_table_files({kFixtures + "conll.parquet"}, "--dataset_name");
  ASSERT_EQ(t.num_rows(), 30);
  EXPECT_EQ(t.table.names, (std::vector<std::string>{"id", "tokens", "pos_tags", "chunk_tags", "ner_tags"}));
  EXPECT_EQ(col(t, "tokens")[1], json::parse(R"(["rejects", "German", "call", "to", "boycott", "British"])"));
  EXPECT_EQ(col(t, "ner_tags")[1], json::parse("[0, 1, 2, 3, 4, 5]"));
  ASSERT_TRUE(t.features.has_value());
  EXPECT_EQ(t.class_names("ner_tags"), (std::vector<std::string>{"O", "B-PER", "I-PER", "B-ORG", "I-ORG",
                                                                 "B-LOC", "I-LOC", "B-MISC", "I-MISC"}));
  EXPECT_EQ(t.class_names("chunk_tags").at(1), "B-ADJP");
  EXPECT_TRUE(t.class_names("tokens").empty());  // a Sequence of Value("string")
  EXPECT_TRUE(t.class_names("id").empty());
  EXPECT_TRUE(t.class_names("absent").empty());
}

TEST(ParquetTable, ColumnSelectionKeepsTheirFeatures) {
  TableReadOptions opt;
  opt.columns = {"ner_tags", "tokens"};
  const auto t = read_table_files({kFixtures + "conll.parquet"}, "--dataset_name", opt);
  EXPECT_EQ(t.table.names, (std::vector<std::string>{"ner_tags", "tokens"}));
  ASSERT_TRUE(t.features.has_value());
  EXPECT_EQ(t.features->keys, (std::vector<std::string>{"ner_tags", "tokens"}));
  EXPECT_EQ(t.class_names("ner_tags").size(), 9u);
  opt.columns = {"tokens", "labels"};
  expect_error([&] { read_table_files({kFixtures + "conll.parquet"}, "--dataset_name", opt); },
               {"--dataset_name " + kFixtures +
                "conll.parquet: no column 'labels' (columns: id, tokens, pos_tags, "
                "chunk_tags, ner_tags)"});
}

TEST(ParquetTable, SquadStructColumn) {
  const auto t = read_table_files({kFixtures + "squad.parquet"}, "--train_file");
  ASSERT_EQ(t.num_rows(), 40);
  EXPECT_EQ(col(t, "answers")[0], json::parse(R"({"text": ["Archi"], "answer_start": [0]})"));
  EXPECT_EQ(t.column("answers")[0].kind, Value::Kind::Struct);
}

TEST(ParquetTable, Errors) {
  TempDir dir;
  expect_error([&] { read_table_files({dir.path() + "/none.parquet"}, "--train_file"); },
               {"--train_file " + dir.path() + "/none.parquet: cannot open Parquet file"});
  const std::string junk = dir.write("junk.parquet", "not a parquet file at all");
  expect_error([&] { read_table_files({junk}, "--train_file"); }, {"--train_file " + junk + ": "});
}

// ------------------------------------------------------------------------------ selection, files, table

TEST(TableFiles, ColumnSelection) {
  TempDir dir;
  TableReadOptions opt;
  opt.columns = {"label", "sentence"};
  const auto t = read(dir, "t.csv", "idx,sentence,label\n0,hello,1\n", opt);
  EXPECT_EQ(t.table.names, (std::vector<std::string>{"label", "sentence"}));
  EXPECT_FALSE(t.has_column("idx"));
  opt.columns = {"sentence", "labels"};
  expect_error([&] { read(dir, "t.csv", "idx,sentence,label\n0,hello,1\n", opt); },
               {"--train_file " + dir.path() + "/t.csv: no column 'labels' (columns: idx, sentence, label)"});
  expect_error([&] { read(dir, "t.jsonl", "{\"text\": \"x\"}\n", opt); },
               {"/t.jsonl: no column 'sentence' (columns: text)"});
}

TEST(TableFiles, ConcatenatesInFirstFileColumnOrder) {
  TempDir dir;
  const std::string a = dir.write("a.csv", "sentence,label\nx,1\ny,0\n");
  const std::string b = dir.write("b.csv", "label,sentence\n2,z\n");
  const std::string c = dir.write("c.csv", "sentence,label\nw,0.5\n");
  const auto t = read_table_files({a, b}, "--train_file");
  ASSERT_EQ(t.num_rows(), 3);
  EXPECT_EQ(t.table.names, (std::vector<std::string>{"sentence", "label"}));
  EXPECT_EQ(col(t, "sentence"), json::parse(R"(["x", "y", "z"])"));
  EXPECT_EQ(kind(t, "label"), "int");
  EXPECT_EQ(t.source, a + " (+1 more files)");
  // An int file and a float file meet as float64.
  const auto f = read_table_files({a, c}, "--train_file");
  EXPECT_EQ(kind(f, "label"), "double");
  EXPECT_EQ(col(f, "label"), json::parse("[1.0, 0.0, 0.5]"));
  // Parquet files too; the features are the first file's.
  const auto p = read_table_files({kFixtures + "conll.parquet", kFixtures + "conll.parquet"}, "--train_file");
  EXPECT_EQ(p.num_rows(), 60);
  EXPECT_EQ(p.class_names("ner_tags").size(), 9u);
}

TEST(TableFiles, ConcatenationErrors) {
  TempDir dir;
  const std::string a = dir.write("a.csv", "sentence,label\nx,1\n");
  const std::string b = dir.write("b.csv", "sentence,idx\ny,1\n");
  const std::string j = dir.write("c.json", "{\"sentence\": \"x\", \"label\": 1}\n");
  expect_error(
      [&] {
        read_table_files({a, b}, "--train_file");
      },
      {"--train_file " + b + ": columns (sentence, idx) differ from " + a +
       "'s (sentence, label); the files of one split need the same columns"});
  expect_error(
      [&] {
        read_table_files({a, j}, "--train_file");
      },
      {"--train_file " + j + ": a json file among csv files"});
  expect_error(
      [&] {
        read_table_files({a, dir.path() + "/gone.csv"}, "--train_file");
      },
      {"--train_file " + dir.path() + "/gone.csv: cannot open"});
  expect_error([&] { read_table_files({}, "--train_file"); }, {"--train_file: no files given"});
  // A selection makes only the selected columns matter.
  TableReadOptions opt;
  opt.columns = {"sentence"};
  EXPECT_EQ(read_table_files({a, b}, "--train_file", opt).num_rows(), 2);
}

TEST(TableFiles, ColumnAndKeepFirst) {
  TempDir dir;
  auto t = read(dir, "t.csv", "a,b\n1,x\n2,y\n3,z\n");
  expect_error([&] { t.column("c"); }, {dir.path() + "/t.csv: no column 'c' (columns: a, b)"});
  t.keep_first(-1);
  EXPECT_EQ(t.num_rows(), 3);
  t.keep_first(10);
  EXPECT_EQ(t.num_rows(), 3);
  t.keep_first(2);
  EXPECT_EQ(t.num_rows(), 2);
  EXPECT_EQ(col(t, "b"), json::parse(R"(["x", "y"])"));
  t.keep_first(0);
  EXPECT_EQ(t.num_rows(), 0);
  EXPECT_TRUE(t.column("a").empty());
}

// ----------------------------------------------------------------------------------------------- fuzzing

// Byte mutations of valid files (flips, insertions of the formats' special characters, deletions,
// truncation) must end in a table or one ct::Error line, never a crash or another exception. In memory,
// through the loaders read_table_files calls after reading the file: thousands of files would be slow.
template <class Read>
void fuzz(const std::string& valid, int iterations, Read read_text) {
  std::mt19937 rng(12345);
  const std::string specials = "\"',\n\r{}[]:\\\x80\xC3\xFF 0e.-";
  int tables = 0, errors = 0;
  for (int it = 0; it < iterations; ++it) {
    std::string s = valid;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = rng() % s.size();
      switch (rng() % 5) {
        case 0:
          s[at] = static_cast<char>(rng() & 0xFF);
          break;
        case 1:
          s.insert(at, 1, specials[rng() % specials.size()]);
          break;
        case 2:
          s.erase(at, 1 + rng() % 3);
          break;
        case 3:
          s[at] = specials[rng() % specials.size()];
          break;
        default:
          s.resize(at);
          break;
      }
    }
    try {
      const parquet::Table t = read_text(s);
      ASSERT_EQ(t.columns.size(), t.names.size());
      for (const auto& c : t.columns) ASSERT_EQ(static_cast<int64_t>(c.size()), t.num_rows);
      ++tables;
    } catch (const ct::Error& e) {
      ASSERT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      ++errors;
    }
  }
  // Both outcomes happen, so the mutations reach past the first check.
  EXPECT_GT(tables, 0);
  EXPECT_GT(errors, 0);
}

TEST(TableFuzz, CsvMutations) {
  fuzz(
      "sentence1,sentence2,label,score\n\"a, \"\"quoted\"\" one\",plain,1,0.5\nb,\"multi\nline\",0,\n"
      "c,d,1,2e3\n",
      4000, [](const std::string& s) { return read_csv_table(s, "f.csv"); });
}

TEST(TableFuzz, JsonMutations) {
  const auto json_lines = [](const std::string& s) { return read_json_table(s, "f.json", ""); };
  fuzz(
      "{\"tokens\": [\"EU\", \"rejects\"], \"ner_tags\": [3, 0], \"meta\": {\"id\": 1, \"ok\": true}}\n"
      "{\"tokens\": [], \"ner_tags\": [], \"score\": 1.5e-3, \"x\": null}\n",
      4000, json_lines);
  fuzz("[\n {\"a\": [1, 2.5], \"b\": \"caf\xC3\xA9\"},\n {\"b\": \"\\u00e9\\n\"}\n]\n", 2000, json_lines);
  fuzz("{\n \"s\": [\"x\", \"y\"],\n \"l\": [[1], [2, 3]]\n}\n", 2000, json_lines);
  fuzz("{\"v\": 1, \"data\": [{\"a\": 1}, {\"b\": [2]}]}", 2000,
       [](const std::string& s) { return read_json_table(s, "f.json", "data"); });
}

TEST(TableFuzz, TextMutations) {
  fuzz("line one\r\nline two\n\ncaf\xC3\xA9\n", 2000,
       [](const std::string& s) { return read_text_table(s, "f.txt", true); });
}

}  // namespace
}  // namespace ct::data

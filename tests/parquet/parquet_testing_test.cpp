// Files from apache/parquet-testing (data/, Apache-2.0; tests/parquet/data/parquet-testing/LICENSE.txt),
// written by parquet-mr, parquet-cpp/pyarrow, Impala and Spark: every one reads (or is refused with the
// reason a reader must give), the first rows of 22 match what hyparquet (an independent reader, npm) returns
// (tools/parquet_testing_expected.mjs), and the DELTA_* files match their _expect.csv cell by cell.
#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"
#include "parquet/parquet_file.h"
#include "parquet_test_util.h"

namespace ct::parquet {
namespace {

using nlohmann::json;

std::string pt(const std::string& name) {
  return test::fixture("parquet-testing/" + name);
}

// hyparquet's conventions beside ours: "__skip__" (a value it converts: dates, INT96, NaN), {"hex": ...} for
// binary that is not UTF-8, {"bigint": ...} beyond 2^53, and MAPs as objects where we return lists of
// {key, value}.
std::string diff(const json& want, const json& got, const std::string& at) {
  if (want.is_string() && want == "__skip__") return "";
  if (want.is_object() && want.contains("hex") && got.is_string()) {
    std::string hex;
    for (unsigned char c : got.get<std::string>()) {
      static const char* d = "0123456789abcdef";
      hex += d[c >> 4];
      hex += d[c & 15];
    }
    return hex == want["hex"] ? "" : at + ": want hex " + want["hex"].dump() + ", got " + hex;
  }
  if (want.is_object() && want.contains("bigint") && got.is_number_integer())
    return want["bigint"] == std::to_string(got.get<int64_t>()) ? "" : at + ": bigint differs";
  if (want.is_object() && got.is_array()) {  // a MAP
    json as_object = json::object();
    for (const auto& kv : got) {
      if (!kv.is_object() || !kv.contains("key") || !kv.contains("value"))
        return at + ": not a map: " + got.dump();
      as_object[kv["key"].is_string() ? kv["key"].get<std::string>() : kv["key"].dump()] = kv["value"];
    }
    return diff(want, as_object, at);
  }
  if (want.is_object() && got.is_object()) {
    if (want.size() != got.size()) return at + ": want " + want.dump() + ", got " + got.dump();
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) return at + ": missing field " + it.key();
      std::string d = diff(it.value(), got[it.key()], at + "." + it.key());
      if (!d.empty()) return d;
    }
    return "";
  }
  if (want.is_array() && got.is_array()) {
    if (want.size() != got.size()) return at + ": want " + want.dump() + ", got " + got.dump();
    for (size_t i = 0; i < want.size(); ++i) {
      std::string d = diff(want[i], got[i], at + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    return "";
  }
  return test::diff(want, got, at);
}

TEST(ParquetTesting, FirstRowsMatchAnIndependentReader) {
  const json expected = json::parse(test::slurp(pt("expected.json")));
  ASSERT_GE(expected.size(), 20u);
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    SCOPED_TRACE(it.key());
    auto f = ParquetFile::open(pt(it.key()));
    const Table t = f->read();
    EXPECT_EQ(t.num_rows, it.value()["num_rows"].get<int64_t>());
    const json& rows = it.value()["first_rows"];
    for (size_t r = 0; r < rows.size(); ++r) {
      json got = json::object();
      for (size_t c = 0; c < t.names.size(); ++c) got[t.names[c]] = test::to_json(t.columns[c][r]);
      const std::string d = diff(rows[r], got, it.key() + " row " + std::to_string(r));
      ASSERT_EQ(d, "");
    }
  }
}

TEST(ParquetTesting, EveryFileReadsOrIsRefusedWithItsReason) {
  const std::pair<const char*, int64_t> readable[] = {
      {"byte_stream_split.zstd.parquet", 300},
      {"delta_length_byte_array.parquet", 1000},
      {"hadoop_lz4_compressed.parquet", 4},
      {"non_hadoop_lz4_compressed.parquet", 4},
      {"lz4_raw_compressed.parquet", 4},
      {"page_v2_empty_compressed.parquet", 10},
      {"nested_maps.snappy.parquet", 6},
      {"nullable.impala.parquet", 7},
      {"map_no_value.parquet", 3},
      {"int96_from_spark.parquet", 6},
      {"single_nan.parquet", 1},
      {"unknown-logical-type.parquet", 3},
      {"datapage_v1-snappy-compressed-checksum.parquet", 5120},
  };
  for (const auto& [file, rows] : readable) {
    SCOPED_TRACE(file);
    auto f = ParquetFile::open(pt(file));
    EXPECT_EQ(f->read().num_rows, rows);
  }
  // A page of 1 GiB + 4 bytes (a string map built to exceed 2^30): past the reader's page limit.
  try {
    ParquetFile::open(pt("large_string_map.brotli.parquet"))->read();
    ADD_FAILURE() << "read a 1 GiB page";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("page 0: page claims 1073741828 uncompressed bytes (limit 1073741824)"),
        std::string::npos)
        << e.what();
  }
  try {
    ParquetFile::open(pt("uniform_encryption.parquet.encrypted"));
    ADD_FAILURE() << "read an encrypted file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("encrypted Parquet footer (PARE)"), std::string::npos) << e.what();
  }
}

// RFC 4180-ish: quoted fields without embedded quotes, an empty unquoted field is null.
std::vector<std::vector<std::optional<std::string>>> read_csv(const std::string& path) {
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::istringstream in(test::slurp(path));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::optional<std::string>> row;
    size_t i = 0;
    while (i <= line.size()) {
      if (i < line.size() && line[i] == '"') {
        const size_t close = line.find('"', i + 1);
        row.emplace_back(line.substr(i + 1, close - i - 1));
        i = close + 2;
      } else {
        const size_t comma = std::min(line.find(',', i), line.size());
        if (comma == i) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(line.substr(i, comma - i));
        }
        i = comma + 1;
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

TEST(ParquetTesting, DeltaEncodedColumnsMatchTheirCsv) {
  for (const char* name : {"delta_encoding_required_column", "delta_encoding_optional_column"}) {
    SCOPED_TRACE(name);
    const auto csv = read_csv(pt(std::string(name) + "_expect.csv"));
    auto f = ParquetFile::open(pt(std::string(name) + ".parquet"));
    const Table t = f->read();
    ASSERT_EQ(static_cast<size_t>(t.num_rows) + 1, csv.size());
    ASSERT_EQ(t.names.size(), csv[0].size());
    int64_t nulls = 0;
    for (size_t r = 0; r < static_cast<size_t>(t.num_rows); ++r) {
      for (size_t c = 0; c < t.names.size(); ++c) {
        const Value& v = t.columns[c][r];
        const auto& want = csv[r + 1][c];
        std::string got;
        if (v.kind == Value::Kind::Int) {
          got = std::to_string(v.i);
        } else if (v.kind == Value::Kind::String) {
          got = v.s;
        }
        if (!want) {
          EXPECT_TRUE(v.is_null()) << "row " << r << " " << t.names[c];
          ++nulls;
        } else {
          ASSERT_EQ(got, *want) << "row " << r << " " << t.names[c];
        }
      }
    }
    if (std::string(name).find("optional") != std::string::npos) {
      EXPECT_GT(nulls, 0);
    }
  }
  auto f = ParquetFile::open(pt("delta_encoding_optional_column.parquet"));
  f->read();
  EXPECT_TRUE(f->stats().encodings & (1u << kDeltaBinaryPacked));
  EXPECT_TRUE(f->stats().encodings & (1u << kDeltaByteArray));
}

}  // namespace
}  // namespace ct::parquet

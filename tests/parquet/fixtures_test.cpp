// Every cell of every fixture (written by parquet-wasm/arrow-rs and hyparquet-writer) against expected.json,
// plus which page kinds, encodings and codecs each fixture actually exercised.
#include <algorithm>

#include <gtest/gtest.h>

#include "core/error.h"
#include "parquet/metadata.h"
#include "parquet/parquet_file.h"
#include "parquet_test_util.h"

namespace ct::parquet {
namespace {

using nlohmann::json;
using test::fixture;

const json& expected() {
  static const json j = json::parse(test::slurp(fixture("expected.json")));
  return j;
}

ReadStats check_file(const std::string& file) {
  SCOPED_TRACE(file);
  const json& tables = expected()["tables"];
  const json& rows = tables[expected()["files"][file].get<std::string>()];
  auto f = ParquetFile::open(fixture(file));
  EXPECT_EQ(f->num_rows(), static_cast<int64_t>(rows.size()));
  const Table t = f->read();
  EXPECT_EQ(t.num_rows, static_cast<int64_t>(rows.size()));
  for (size_t c = 0; c < t.names.size(); ++c) {
    for (size_t r = 0; r < rows.size(); ++r) {
      const std::string d = test::diff(rows[r][t.names[c]], test::to_json(t.columns[c][r]),
                                       "row " + std::to_string(r) + "." + t.names[c]);
      EXPECT_EQ(d, "") << file;
      if (!d.empty()) return f->stats();
    }
  }
  // The columns were read (hyparquet's file holds 6 of the flat table's 10; imdb's and wikitext's tables
  // have 2 and 1).
  EXPECT_GE(t.names.size(), std::min<size_t>(5, rows.empty() ? 0 : rows[0].size()));
  return f->stats();
}

TEST(ParquetFixtures, EveryFileMatchesItsRows) {
  for (auto it = expected()["files"].begin(); it != expected()["files"].end(); ++it) check_file(it.key());
}

TEST(ParquetFixtures, CodecsAreThoseNamed) {
  const std::pair<const char*, int> cases[] = {
      {"flat_v1_uncompressed.parquet", kUncompressed},
      {"flat_v1_snappy.parquet", kSnappy},
      {"flat_v1_gzip.parquet", kGzip},
      {"flat_v1_brotli.parquet", kBrotli},
      {"flat_v1_zstd.parquet", kZstd},
      {"flat_v1_lz4_raw.parquet", kLz4Raw},
      {"flat_v1_lz4.parquet", kLz4Hadoop},
      {"flat_v2_zstd.parquet", kZstd},
  };
  for (const auto& [file, codec] : cases) {
    const ReadStats s = check_file(file);
    EXPECT_EQ(s.codecs, 1u << codec) << file;
  }
}

TEST(ParquetFixtures, PageVersionsDictionaryAndFallback) {
  ReadStats v1 = check_file("flat_v1_snappy.parquet");
  EXPECT_GT(v1.pages[kDataPage], 8) << "several pages per chunk";
  EXPECT_EQ(v1.pages[kDataPageV2], 0);
  EXPECT_GT(v1.pages[kDictionaryPage], 0);
  ReadStats v2 = check_file("flat_v2_snappy.parquet");
  EXPECT_GT(v2.pages[kDataPageV2], 8);
  EXPECT_EQ(v2.pages[kDataPage], 0);
  EXPECT_TRUE(v2.encodings & (1u << kRleDictionary));
  ReadStats fb = check_file("dict_fallback.parquet");
  EXPECT_TRUE(fb.encodings & (1u << kPlain)) << "PLAIN pages after the dictionary filled up";
  EXPECT_TRUE(fb.encodings & ((1u << kRleDictionary) | (1u << kPlainDictionary)));
  ReadStats plain = check_file("flat_plain.parquet");
  EXPECT_EQ(plain.encodings, 1u << kPlain);
  EXPECT_EQ(plain.pages[kDictionaryPage], 0);
}

TEST(ParquetFixtures, DeltaAndByteStreamSplitEncodings) {
  for (const char* file : {"encodings_v1.parquet", "encodings_v2.parquet"}) {
    const ReadStats s = check_file(file);
    EXPECT_TRUE(s.encodings & (1u << kDeltaBinaryPacked)) << file;
    EXPECT_TRUE(s.encodings & (1u << kDeltaLengthByteArray)) << file;
    EXPECT_TRUE(s.encodings & (1u << kDeltaByteArray)) << file;
    EXPECT_TRUE(s.encodings & (1u << kByteStreamSplit)) << file;
  }
  EXPECT_TRUE(check_file("encodings_v2.parquet").encodings & (1u << kRle)) << "RLE booleans in v2 pages";
}

TEST(ParquetFixtures, ReadsOnlyRequestedColumnsRowGroupByRowGroup) {
  auto f = ParquetFile::open(fixture("squad.parquet"));
  ASSERT_GT(f->num_row_groups(), 1);
  const Table t = f->read_row_group(1, {"answers"});
  ASSERT_EQ(t.names.size(), 1u);
  EXPECT_EQ(t.num_rows, f->metadata().row_groups[1].num_rows);
  // Only the two answer leaves were read.
  EXPECT_EQ(f->stats().pages[kDataPage] > 0, true);
  const json& rows = expected()["tables"]["squad"];
  const int64_t first = f->metadata().row_groups[0].num_rows;
  for (int64_t r = 0; r < t.num_rows; ++r)
    ASSERT_EQ(test::diff(rows[static_cast<size_t>(first + r)]["answers"],
                         test::to_json(t.columns[0][static_cast<size_t>(r)]), "answers"),
              "");
}

TEST(ParquetFixtures, UnknownColumnListsTheColumns) {
  auto f = ParquetFile::open(fixture("squad.parquet"));
  try {
    f->read({"answer"});
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("no column 'answer' (columns: id, title, context, question, answers)"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ct::parquet

// Malformed files: hand-made footers and a deterministic fuzz run over mutated and truncated fixtures.
// Every outcome must be a clean read or one ct::Error line naming the file; never a crash, another
// exception type (bad_alloc from a trusted size) or a hang. Run it under ASan/UBSan (cmake --preset debug).
#include <cstdlib>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "core/error.h"
#include "parquet/parquet_file.h"
#include "parquet_test_util.h"

namespace ct::parquet {
namespace {

std::string error_of(const std::string& bytes, const std::string& name = "bad.parquet") {
  try {
    auto f = ParquetFile::from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), name);
    f->read();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string footer(const std::string& meta) {
  std::string s = "PAR1" + meta;
  const uint32_t len = static_cast<uint32_t>(meta.size());
  s.append(reinterpret_cast<const char*>(&len), 4);
  return s + "PAR1";
}

TEST(ParquetMalformed, HandMadeFooters) {
  EXPECT_NE(error_of("").find("bad.parquet: not a Parquet file (0 bytes"), std::string::npos);
  EXPECT_NE(error_of("PAR1xxxxxxxxPAR2").find("no PAR1 magic at the end"), std::string::npos);
  EXPECT_NE(error_of("PAR0xxxxxxxxPAR1").find("no PAR1 magic at the start"), std::string::npos);
  EXPECT_NE(error_of("PAR1xxxxxxxxPARE").find("encrypted Parquet footer (PARE)"), std::string::npos);
  std::string big = "PAR1xxxx";
  const uint32_t len = 1000;
  big.append(reinterpret_cast<const char*>(&len), 4);
  EXPECT_NE(error_of(big + "PAR1").find("footer length 1000 exceeds the file"), std::string::npos);
  // A struct whose field 1 (version) has the wrong type (binary).
  EXPECT_NE(error_of(footer(std::string("\x18\x01x\x00", 4))).find("FileMetaData.version (id 1) has type 8"),
            std::string::npos);
  // Nesting beyond the limit: an unknown field 15 holding a struct, 40 times.
  EXPECT_NE(error_of(footer(std::string(40, '\xfc'))).find("nesting deeper than 32"), std::string::npos);
  // A list claiming more elements than bytes left.
  EXPECT_NE(error_of(footer(std::string("\x15\x02\x19\xfc\xff\xff\x0f", 7))).find("elements,"),
            std::string::npos);
  // No schema.
  EXPECT_NE(error_of(footer(std::string("\x15\x02\x00", 3))).find("has no schema"), std::string::npos);
}

TEST(ParquetMalformed, TruncatedFixtureNamesFile) {
  const std::string good = test::slurp(test::fixture("squad.parquet"));
  const std::string e = error_of(good.substr(0, good.size() / 2), "half.parquet");
  EXPECT_EQ(e.rfind("half.parquet: ", 0), 0u) << e;
}

TEST(ParquetMalformed, CorruptPageNamesRowGroupColumnAndPage) {
  std::string bytes = test::slurp(test::fixture("flat_v1_uncompressed.parquet"));
  // Smash the first page header (right after the magic): the error must say where.
  for (int i = 4; i < 12; ++i) bytes[static_cast<size_t>(i)] = '\xff';
  const std::string e = error_of(bytes, "smashed.parquet");
  EXPECT_NE(e.find("smashed.parquet: row group 0, column 'i32', page 0: "), std::string::npos) << e;
}

TEST(ParquetMalformed, FuzzMutationsNeverCrash) {
  const char* files[] = {"squad.parquet",
                         "nested_v1.parquet",
                         "nested_v2.parquet",
                         "encodings_v1.parquet",
                         "encodings_v2.parquet",
                         "dict_fallback.parquet",
                         "flat_v1_gzip.parquet",
                         "flat_v2_zstd.parquet",
                         "conll.parquet",
                         "flat_v1_lz4.parquet",
                         "flat_v1_brotli.parquet",
                         "hyparquet_flat.parquet",
                         "parquet-testing/nullable.impala.parquet",
                         "parquet-testing/nested_maps.snappy.parquet",
                         "parquet-testing/delta_encoding_optional_column.parquet",
                         "parquet-testing/datapage_v2.snappy.parquet"};
  int errors = 0, clean = 0;
  // CT_PARQUET_FUZZ_ITERS raises the per-file count for a longer run (the default keeps the test fast).
  const char* env = std::getenv("CT_PARQUET_FUZZ_ITERS");
  const int iters = env && std::atoi(env) > 0 ? std::atoi(env) : 300;
  for (const char* file : files) {
    const std::string good = test::slurp(test::fixture(file));
    std::mt19937 rng(12345);
    for (int iter = 0; iter < iters; ++iter) {
      std::string bytes = good;
      const size_t n = bytes.size();
      const int kind = iter % 4;
      if (kind == 0) {
        bytes.resize(std::uniform_int_distribution<size_t>(0, n - 1)(rng));
      } else {
        // Half the flips land in the footer, where one byte changes the structure.
        const size_t lo = kind == 1 ? n - std::min<size_t>(n, 600) : 0;
        const int flips = 1 + static_cast<int>(rng() % 6);
        for (int k = 0; k < flips; ++k) {
          const size_t at = std::uniform_int_distribution<size_t>(lo, n - 1)(rng);
          bytes[at] = static_cast<char>(kind == 3 ? rng() & 0xff : bytes[at] ^ (1 << (rng() % 8)));
        }
      }
      try {
        auto f = ParquetFile::from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), file);
        f->read();
        ++clean;
      } catch (const Error& e) {
        ++errors;
        const std::string msg = e.what();
        ASSERT_EQ(msg.rfind(file, 0), 0u) << msg;
        ASSERT_EQ(msg.find('\n'), std::string::npos) << msg;
      }
    }
  }
  EXPECT_GT(errors, 1000);
  RecordProperty("clean_reads", clean);
}

}  // namespace
}  // namespace ct::parquet

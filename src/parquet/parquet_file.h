// A Parquet file, memory-mapped: footer checks, schema, and rows of the requested top-level columns, read
// row group by row group. Every malformed input throws one ct::Error line naming the file, and the row
// group, column and page where it applies.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parquet/metadata.h"
#include "parquet/schema.h"
#include "parquet/value.h"

namespace ct::parquet {

// Rows of some top-level columns: columns[k][row] is column names[k]'s cell.
struct Table {
  std::vector<std::string> names;
  std::vector<std::vector<Value>> columns;
  int64_t num_rows = 0;

  // Index of a column by name, -1 when absent.
  int find(const std::string& name) const;
};

// Totals over every chunk read so far (tests check which page kinds and encodings a fixture exercised).
struct ReadStats {
  int64_t pages[4] = {0, 0, 0, 0};  // by PageType
  uint32_t encodings = 0;           // bit e: some data page used Encoding e
  uint32_t codecs = 0;              // bit c: some chunk used CompressionCodec c
};

class ParquetFile {
 public:
  // Maps `path` and decodes its footer.
  static std::unique_ptr<ParquetFile> open(const std::string& path);
  // Decodes a file already in memory (the bytes must outlive the object); `name` stands for it in errors.
  static std::unique_ptr<ParquetFile> from_memory(const uint8_t* data, size_t size, const std::string& name);
  ~ParquetFile();
  ParquetFile(const ParquetFile&) = delete;
  ParquetFile& operator=(const ParquetFile&) = delete;

  const std::string& name() const { return name_; }
  const FileMetaData& metadata() const { return md_; }
  const Schema& schema() const { return *schema_; }
  int64_t num_rows() const { return md_.num_rows; }
  int num_row_groups() const { return static_cast<int>(md_.row_groups.size()); }
  // Top-level column names in schema order.
  std::vector<std::string> column_names() const;
  // The footer's key/value metadata entry `key` (e.g. "huggingface"); empty when absent.
  std::string key_value(const std::string& key) const;

  // Reads `columns` (top-level names; empty: all) of row group `rg`. Only those columns' chunks are touched.
  Table read_row_group(int rg, const std::vector<std::string>& columns = {}) const;
  // All row groups, concatenated.
  Table read(const std::vector<std::string>& columns = {}) const;

  const ReadStats& stats() const { return stats_; }

 private:
  ParquetFile() = default;
  void init();

  std::string name_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  // non-null when this object owns a mapping
  FileMetaData md_;
  std::unique_ptr<Schema> schema_;
  mutable ReadStats stats_;
};

}  // namespace ct::parquet

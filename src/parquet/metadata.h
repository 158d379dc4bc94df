// Parquet's footer (FileMetaData) and page headers, as decoded from Thrift: only the fields a reader needs;
// everything else is skipped by type. Enum values are parquet.thrift's.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ct::parquet {

enum PhysicalType : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

enum Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

enum Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};

enum Codec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4Hadoop = 5,
  kZstd = 6,
  kLz4Raw = 7,
};

enum PageType : int32_t { kDataPage = 0, kIndexPage = 1, kDictionaryPage = 2, kDataPageV2 = 3 };

// ConvertedType values the reader looks at.
enum ConvertedType : int32_t { kUtf8 = 0, kMap = 1, kMapKeyValue = 2, kList = 3, kUint32 = 13 };

// LogicalType union member ids the reader looks at.
enum LogicalKind : int32_t {
  kLogicalNone = 0,
  kLogicalString = 1,
  kLogicalMap = 2,
  kLogicalList = 3,
  kLogicalInteger = 10
};

struct SchemaElement {
  int32_t type = -1;  // PhysicalType; -1 for groups
  int32_t type_length = 0;
  int32_t repetition = -1;  // -1: absent (the root)
  std::string name;
  int32_t num_children = 0;
  int32_t converted_type = -1;
  int32_t logical = kLogicalNone;
  int32_t int_bit_width = 0;  // LogicalType INTEGER
  bool int_signed = true;
};

struct ColumnMetaData {
  int32_t type = -1;
  std::vector<std::string> path;
  int32_t codec = -1;
  int64_t num_values = -1;
  int64_t total_uncompressed_size = -1;
  int64_t total_compressed_size = -1;
  int64_t data_page_offset = -1;
  int64_t dictionary_page_offset = -1;  // -1: none
};

struct ColumnChunk {
  std::string file_path;
  bool has_meta_data = false;
  ColumnMetaData meta;
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t num_rows = -1;
};

struct FileMetaData {
  int32_t version = 0;
  std::vector<SchemaElement> schema;
  int64_t num_rows = -1;
  std::vector<RowGroup> row_groups;
  std::vector<std::pair<std::string, std::string>> key_value;
  std::string created_by;
};

struct DataPageHeader {
  int32_t num_values = -1;
  int32_t encoding = -1;
  int32_t def_encoding = kRle;
  int32_t rep_encoding = kRle;
};

struct DictionaryPageHeader {
  int32_t num_values = -1;
  int32_t encoding = -1;
};

struct DataPageHeaderV2 {
  int32_t num_values = -1;
  int32_t num_nulls = -1;
  int32_t num_rows = -1;
  int32_t encoding = -1;
  int32_t def_levels_byte_length = -1;
  int32_t rep_levels_byte_length = -1;
  bool is_compressed = true;  // parquet.thrift's default when absent
};

struct PageHeader {
  int32_t type = -1;
  int32_t uncompressed_page_size = -1;
  int32_t compressed_page_size = -1;
  bool has_v1 = false, has_dict = false, has_v2 = false;
  DataPageHeader v1;
  DictionaryPageHeader dict;
  DataPageHeaderV2 v2;
};

// Decodes the footer's Thrift bytes; `what` names the file in errors. Checks required fields.
FileMetaData parse_file_metadata(const uint8_t* begin, const uint8_t* end, const std::string& what);
// Decodes one page header starting at `begin`; sets `*header_size` to its encoded length.
PageHeader parse_page_header(const uint8_t* begin, const uint8_t* end, const std::string& what,
                             size_t* header_size);

}  // namespace ct::parquet

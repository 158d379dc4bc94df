// Thrift compact protocol (the encoding of Parquet's footer and page headers), read from a bounded byte
// range. Every read checks the range, container sizes are bounded by the bytes left, and nesting by
// kMaxDepth, so hostile input ends in ct::Error rather than a crash or a huge allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ct::parquet {

// Compact protocol type codes (field header low nibble, list element type).
enum class TType : uint8_t {
  Stop = 0,
  True = 1,
  False = 2,
  I8 = 3,
  I16 = 4,
  I32 = 5,
  I64 = 6,
  Double = 7,
  Binary = 8,
  List = 9,
  Set = 10,
  Map = 11,
  Struct = 12,
  Uuid = 13,
};

struct FieldHeader {
  int16_t id = 0;
  TType type = TType::Stop;
};

struct ListHeader {
  TType elem = TType::Stop;
  uint32_t size = 0;
};

class CompactReader {
 public:
  static constexpr int kMaxDepth = 32;

  // `what` names the structure being read (e.g. "FileMetaData") in errors.
  CompactReader(const uint8_t* begin, const uint8_t* end, std::string what);

  size_t consumed() const { return static_cast<size_t>(pos_ - begin_); }

  // Struct traversal: begin_struct() before the first next_field(), end_struct() after it returns false.
  void begin_struct();
  void end_struct();
  // Reads the next field header; false at the struct's stop byte.
  bool next_field(FieldHeader& h);

  bool read_bool(const FieldHeader& h);  // a struct field's bool lives in its type nibble
  int8_t read_i8();
  int16_t read_i16();
  int32_t read_i32();
  int64_t read_i64();
  double read_double();
  std::string_view read_binary();
  std::string read_string() { return std::string(read_binary()); }
  ListHeader read_list_header();
  bool read_list_bool();  // a bool list element is one byte

  // Skips a value of type `t`, recursing into containers.
  void skip(TType t);

  // Throws naming the structure and the byte offset.
  [[noreturn]] void error(const std::string& msg) const;

 private:
  uint64_t read_varint(int max_bytes);
  uint8_t read_byte();
  void skip_nested(TType t, int depth);
  void skip_element(TType t, int depth);

  const uint8_t* begin_;
  const uint8_t* pos_;
  const uint8_t* end_;
  std::string what_;
  int16_t last_id_[kMaxDepth + 1] = {};
  int depth_ = 0;
};

}  // namespace ct::parquet

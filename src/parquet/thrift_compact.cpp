#include "parquet/thrift_compact.h"

#include <cstring>

#include "core/error.h"

namespace ct::parquet {

CompactReader::CompactReader(const uint8_t* begin, const uint8_t* end, std::string what)
    : begin_(begin), pos_(begin), end_(end), what_(std::move(what)) {}

void CompactReader::error(const std::string& msg) const {
  fail(what_, " at byte ", consumed(), ": ", msg);
}

uint8_t CompactReader::read_byte() {
  if (pos_ >= end_) error("truncated (expected another byte)");
  return *pos_++;
}

uint64_t CompactReader::read_varint(int max_bytes) {
  uint64_t v = 0;
  for (int i = 0; i < max_bytes; ++i) {
    const uint8_t b = read_byte();
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) return v;
  }
  error(str("varint longer than ", max_bytes, " bytes"));
}

static int64_t unzigzag(uint64_t u) {
  return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
}

void CompactReader::begin_struct() {
  if (depth_ >= kMaxDepth) error(str("nesting deeper than ", kMaxDepth));
  last_id_[++depth_] = 0;
}

void CompactReader::end_struct() {
  --depth_;
}

bool CompactReader::next_field(FieldHeader& h) {
  const uint8_t b = read_byte();
  if (b == 0) return false;
  const uint8_t delta = b >> 4;
  h.type = static_cast<TType>(b & 0x0f);
  if (h.type == TType::Stop || static_cast<uint8_t>(h.type) > static_cast<uint8_t>(TType::Uuid))
    error(str("bad field type ", int(b & 0x0f)));
  if (delta != 0) {
    h.id = static_cast<int16_t>(last_id_[depth_] + delta);
  } else {
    h.id = read_i16();
  }
  last_id_[depth_] = h.id;
  return true;
}

bool CompactReader::read_bool(const FieldHeader& h) {
  return h.type == TType::True;
}

int8_t CompactReader::read_i8() {
  return static_cast<int8_t>(read_byte());
}
int16_t CompactReader::read_i16() {
  return static_cast<int16_t>(unzigzag(read_varint(3)));
}
int32_t CompactReader::read_i32() {
  return static_cast<int32_t>(unzigzag(read_varint(5)));
}
int64_t CompactReader::read_i64() {
  return unzigzag(read_varint(10));
}

double CompactReader::read_double() {
  if (end_ - pos_ < 8) error("truncated double");
  double d;
  std::memcpy(&d, pos_, 8);
  pos_ += 8;
  return d;
}

std::string_view CompactReader::read_binary() {
  const uint64_t n = read_varint(5);
  if (n > static_cast<uint64_t>(end_ - pos_))
    error(str("binary of ", n, " bytes, only ", end_ - pos_, " left"));
  std::string_view s(reinterpret_cast<const char*>(pos_), n);
  pos_ += n;
  return s;
}

ListHeader CompactReader::read_list_header() {
  const uint8_t b = read_byte();
  ListHeader h;
  h.elem = static_cast<TType>(b & 0x0f);
  h.size = b >> 4;
  if (h.size == 15) {
    const uint64_t n = read_varint(5);
    if (n > 0x7fffffff) error(str("list size ", n));
    h.size = static_cast<uint32_t>(n);
  }
  // Every element takes at least one byte, so a size beyond the bytes left is corrupt (and would let a
  // caller reserve unbounded memory).
  if (h.size > static_cast<uint64_t>(end_ - pos_))
    error(str("list of ", h.size, " elements, ", end_ - pos_, " bytes left"));
  return h;
}

bool CompactReader::read_list_bool() {
  return read_byte() == 1;
}

void CompactReader::skip(TType t) {
  skip_nested(t, depth_);
}

// Container elements differ from struct fields only for bools, which take a byte there.
void CompactReader::skip_element(TType t, int depth) {
  if (t == TType::True || t == TType::False)
    read_byte();
  else
    skip_nested(t, depth);
}

void CompactReader::skip_nested(TType t, int depth) {
  if (depth > kMaxDepth) error(str("nesting deeper than ", kMaxDepth));
  switch (t) {
    case TType::True:
    case TType::False:
      return;  // field bools carry no bytes
    case TType::I8:
      read_byte();
      return;
    case TType::I16:
    case TType::I32:
    case TType::I64:
      read_varint(10);
      return;
    case TType::Double:
      read_double();
      return;
    case TType::Binary:
      read_binary();
      return;
    case TType::Uuid:
      if (end_ - pos_ < 16) error("truncated uuid");
      pos_ += 16;
      return;
    case TType::List:
    case TType::Set: {
      const ListHeader h = read_list_header();
      for (uint32_t i = 0; i < h.size; ++i) skip_element(h.elem, depth + 1);
      return;
    }
    case TType::Map: {
      const uint64_t n = read_varint(5);
      if (n == 0) return;
      if (n > static_cast<uint64_t>(end_ - pos_))
        error(str("map of ", n, " entries, ", end_ - pos_, " bytes left"));
      const uint8_t kv = read_byte();
      for (uint64_t i = 0; i < n; ++i) {
        skip_element(static_cast<TType>(kv >> 4), depth + 1);
        skip_element(static_cast<TType>(kv & 0x0f), depth + 1);
      }
      return;
    }
    case TType::Struct: {
      begin_struct();
      FieldHeader h;
      while (next_field(h)) skip_nested(h.type, depth + 1);
      end_struct();
      return;
    }
    default:
      error(str("cannot skip type ", int(t)));
  }
}

}  // namespace ct::parquet

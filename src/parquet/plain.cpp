#include "parquet/plain.h"

#include <cstring>

#include "core/error.h"

namespace ct::parquet {

size_t fixed_width(int32_t physical_type, int32_t type_length) {
  switch (physical_type) {
    case kInt32:
    case kFloat:
      return 4;
    case kInt64:
    case kDouble:
      return 8;
    case kInt96:
      return 12;
    case kFixedLenByteArray:
      return type_length > 0 ? static_cast<size_t>(type_length) : 0;
    default:
      return 0;
  }
}

static void need(Span in, size_t bytes, size_t count, const char* type) {
  if (bytes > in.n) fail("PLAIN ", type, ": ", count, " values need ", bytes, " bytes, page has ", in.n);
}

void decode_plain(int32_t type, int32_t type_length, Span in, size_t count, Values& out) {
  switch (type) {
    case kBoolean: {
      need(in, (count + 7) / 8, count, "BOOLEAN");
      for (size_t i = 0; i < count; ++i) out.ints.push_back((in.p[i >> 3] >> (i & 7)) & 1);
      return;
    }
    case kInt32: {
      need(in, count * 4, count, "INT32");
      for (size_t i = 0; i < count; ++i) {
        int32_t v;
        std::memcpy(&v, in.p + 4 * i, 4);
        out.ints.push_back(v);
      }
      return;
    }
    case kInt64: {
      need(in, count * 8, count, "INT64");
      const size_t base = out.ints.size();
      out.ints.resize(base + count);
      if (count) std::memcpy(out.ints.data() + base, in.p, count * 8);
      return;
    }
    case kFloat: {
      need(in, count * 4, count, "FLOAT");
      for (size_t i = 0; i < count; ++i) {
        float v;
        std::memcpy(&v, in.p + 4 * i, 4);
        out.reals.push_back(v);
      }
      return;
    }
    case kDouble: {
      need(in, count * 8, count, "DOUBLE");
      const size_t base = out.reals.size();
      out.reals.resize(base + count);
      if (count) std::memcpy(out.reals.data() + base, in.p, count * 8);
      return;
    }
    case kByteArray: {
      size_t pos = 0;
      for (size_t i = 0; i < count; ++i) {
        if (in.n - pos < 4) fail("PLAIN BYTE_ARRAY value ", i, " of ", count, ": length prefix ends early");
        uint32_t len;
        std::memcpy(&len, in.p + pos, 4);
        pos += 4;
        if (len > in.n - pos)
          fail("PLAIN BYTE_ARRAY value ", i, " of ", len, " bytes, ", in.n - pos, " left");
        out.bytes.emplace_back(reinterpret_cast<const char*>(in.p + pos), len);
        pos += len;
      }
      return;
    }
    case kInt96:
    case kFixedLenByteArray: {
      const size_t w = fixed_width(type, type_length);
      if (w == 0) fail("FIXED_LEN_BYTE_ARRAY with type_length ", type_length);
      if (count > in.n / w) fail("PLAIN fixed-width: ", count, " values of ", w, " bytes, page has ", in.n);
      for (size_t i = 0; i < count; ++i)
        out.bytes.emplace_back(reinterpret_cast<const char*>(in.p + w * i), w);
      return;
    }
    default:
      fail("unknown physical type ", type);
  }
}

void decode_byte_stream_split(int32_t type, int32_t type_length, Span in, size_t count, Values& out,
                              std::vector<uint8_t>& storage) {
  const size_t w = fixed_width(type, type_length);
  if (w == 0 || type == kInt96) fail("BYTE_STREAM_SPLIT is not defined for physical type ", type);
  if (count > in.n / w) fail("BYTE_STREAM_SPLIT: ", count, " values of ", w, " bytes, page has ", in.n);
  storage.resize(count * w);
  for (size_t i = 0; i < count; ++i)
    for (size_t b = 0; b < w; ++b) storage[i * w + b] = in.p[b * count + i];
  if (type == kFixedLenByteArray) {
    for (size_t i = 0; i < count; ++i)
      out.bytes.emplace_back(reinterpret_cast<const char*>(storage.data() + w * i), w);
    return;
  }
  decode_plain(type, type_length, Span{storage.data(), storage.size()}, count, out);
}

}  // namespace ct::parquet

// Decoded leaf values of one column chunk, by storage class of the physical type. Byte strings point into
// page buffers that the chunk keeps alive (or into the mapped file).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "parquet/metadata.h"

namespace ct::parquet {

enum class Storage { Ints, Reals, Bytes };

inline Storage storage_of(int32_t physical_type) {
  switch (physical_type) {
    case kBoolean:
    case kInt32:
    case kInt64:
      return Storage::Ints;
    case kFloat:
    case kDouble:
      return Storage::Reals;
    default:
      return Storage::Bytes;
  }
}

struct Values {
  std::vector<int64_t> ints;
  std::vector<double> reals;
  std::vector<std::string_view> bytes;

  size_t size(Storage s) const {
    return s == Storage::Ints ? ints.size() : s == Storage::Reals ? reals.size() : bytes.size();
  }
};

// A bounded read position in a decoded page; errors name what was being decoded.
struct Span {
  const uint8_t* p = nullptr;
  size_t n = 0;
};

}  // namespace ct::parquet

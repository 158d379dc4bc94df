// PLAIN values (also the dictionary page's format) and BYTE_STREAM_SPLIT.
#pragma once

#include <cstdint>

#include "parquet/values.h"

namespace ct::parquet {

// Appends `count` values of `physical_type` to `out`; byte strings point into `in`.
void decode_plain(int32_t physical_type, int32_t type_length, Span in, size_t count, Values& out);

// BYTE_STREAM_SPLIT for FLOAT, DOUBLE, INT32, INT64 and FIXED_LEN_BYTE_ARRAY (the latter gets new storage).
void decode_byte_stream_split(int32_t physical_type, int32_t type_length, Span in, size_t count, Values& out,
                              std::vector<uint8_t>& storage);

// Width in bytes of a fixed-size physical type (0 for BYTE_ARRAY, BOOLEAN).
size_t fixed_width(int32_t physical_type, int32_t type_length);

}  // namespace ct::parquet

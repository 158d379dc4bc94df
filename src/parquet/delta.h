// DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY (parquet-format Encodings.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "parquet/values.h"

namespace ct::parquet {

// Decodes up to `max_count` integers; returns the bytes consumed (the encoding is self-delimiting, and the
// byte-array encodings continue right after it). `bits` is 32 or 64: values wrap at that width.
size_t decode_delta_binary_packed(Span in, size_t max_count, int bits, std::vector<int64_t>& out);

// Appends `count` byte strings to `out`, pointing into `in`.
void decode_delta_length_byte_array(Span in, size_t count, std::vector<std::string_view>& out);

// Appends `count` byte strings to `out`; they are rebuilt from prefixes into `storage`, which the caller
// keeps.
void decode_delta_byte_array(Span in, size_t count, std::vector<std::string_view>& out,
                             std::unique_ptr<std::vector<uint8_t>>& storage);

}  // namespace ct::parquet

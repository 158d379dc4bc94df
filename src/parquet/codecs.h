// Page decompression: every codec the Hub's writers use, through Debian's libraries. The decompressed size
// must equal the page header's uncompressed size exactly (a mismatch is corruption, not a resize).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ct::parquet {

// Decompresses `src` with `codec` (parquet.thrift CompressionCodec) into exactly `out_size` bytes.
// Throws ct::Error (without location: the caller adds file/row group/column/page) on any mismatch.
std::vector<uint8_t> decompress(int32_t codec, const uint8_t* src, size_t src_size, size_t out_size);

const char* codec_name(int32_t codec);

}  // namespace ct::parquet

#include "parquet/codecs.h"

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>

#include "core/error.h"
#include "parquet/metadata.h"

namespace ct::parquet {

const char* codec_name(int32_t codec) {
  switch (codec) {
    case kUncompressed:
      return "UNCOMPRESSED";
    case kSnappy:
      return "SNAPPY";
    case kGzip:
      return "GZIP";
    case kLzo:
      return "LZO";
    case kBrotli:
      return "BROTLI";
    case kLz4Hadoop:
      return "LZ4";
    case kZstd:
      return "ZSTD";
    case kLz4Raw:
      return "LZ4_RAW";
    default:
      return "unknown codec";
  }
}

namespace {

void gunzip(const uint8_t* src, size_t n, uint8_t* out, size_t out_size) {
  size_t in_pos = 0, out_pos = 0;
  // RFC 1952 allows several members back to back; some writers emit them.
  while (in_pos < n) {
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK) fail("GZIP: inflateInit2 failed");
    z.next_in = const_cast<Bytef*>(src + in_pos);
    z.avail_in = static_cast<uInt>(n - in_pos);
    z.next_out = out + out_pos;
    z.avail_out = static_cast<uInt>(out_size - out_pos);
    const int rc = inflate(&z, Z_FINISH);
    const size_t used = (n - in_pos) - z.avail_in;
    const size_t made = (out_size - out_pos) - z.avail_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END)
      fail("GZIP: corrupt or larger than the ", out_size, " bytes the page header gives (zlib ", rc, ")");
    in_pos += used;
    out_pos += made;
    if (used == 0) break;
  }
  if (out_pos != out_size) fail("GZIP: inflated to ", out_pos, " bytes, page header says ", out_size);
}

// Hadoop's LZ4 framing: [u32 BE raw size][u32 BE compressed size][block]...; false when the bytes don't fit
// it.
bool lz4_hadoop(const uint8_t* src, size_t n, uint8_t* out, size_t out_size) {
  size_t in_pos = 0, out_pos = 0;
  auto be32 = [&](size_t at) {
    return (uint32_t(src[at]) << 24) | (uint32_t(src[at + 1]) << 16) | (uint32_t(src[at + 2]) << 8) |
           src[at + 3];
  };
  while (in_pos < n) {
    if (n - in_pos < 8) return false;
    const uint32_t raw = be32(in_pos), comp = be32(in_pos + 4);
    in_pos += 8;
    if (comp > n - in_pos || raw > out_size - out_pos) return false;
    const int got = LZ4_decompress_safe(reinterpret_cast<const char*>(src + in_pos),
                                        reinterpret_cast<char*>(out + out_pos), static_cast<int>(comp),
                                        static_cast<int>(raw));
    if (got < 0 || static_cast<uint32_t>(got) != raw) return false;
    in_pos += comp;
    out_pos += raw;
  }
  return out_pos == out_size;
}

void lz4_raw(const uint8_t* src, size_t n, uint8_t* out, size_t out_size) {
  const int got = LZ4_decompress_safe(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(out),
                                      static_cast<int>(n), static_cast<int>(out_size));
  if (got < 0 || static_cast<size_t>(got) != out_size)
    fail("LZ4_RAW: corrupt block or size other than the page header's ", out_size, " bytes");
}

}  // namespace

std::vector<uint8_t> decompress(int32_t codec, const uint8_t* src, size_t n, size_t out_size) {
  constexpr size_t kMaxPage = size_t{1} << 30;
  if (out_size > kMaxPage) fail("page claims ", out_size, " uncompressed bytes (limit ", kMaxPage, ")");
  if (n > 0x7fffffff) fail("compressed page of ", n, " bytes");
  std::vector<uint8_t> out(out_size);
  switch (codec) {
    case kUncompressed:
      if (n != out_size) fail("UNCOMPRESSED page of ", n, " bytes, header says ", out_size);
      if (n) std::memcpy(out.data(), src, n);
      break;
    case kSnappy: {
      size_t len = 0;
      if (snappy_uncompressed_length(reinterpret_cast<const char*>(src), n, &len) != SNAPPY_OK)
        fail("SNAPPY: corrupt length preamble");
      if (len != out_size) fail("SNAPPY: block holds ", len, " bytes, page header says ", out_size);
      if (snappy_uncompress(reinterpret_cast<const char*>(src), n, reinterpret_cast<char*>(out.data()),
                            &len) != SNAPPY_OK)
        fail("SNAPPY: corrupt block");
      break;
    }
    case kGzip:
      gunzip(src, n, out.data(), out_size);
      break;
    case kBrotli: {
      size_t len = out_size;
      if (BrotliDecoderDecompress(n, src, &len, out.data()) != BROTLI_DECODER_RESULT_SUCCESS ||
          len != out_size)
        fail("BROTLI: corrupt stream or size other than the page header's ", out_size, " bytes");
      break;
    }
    case kZstd: {
      const size_t got = ZSTD_decompress(out.data(), out_size, src, n);
      if (ZSTD_isError(got)) fail("ZSTD: ", ZSTD_getErrorName(got));
      if (got != out_size) fail("ZSTD: frame holds ", got, " bytes, page header says ", out_size);
      break;
    }
    case kLz4Raw:
      lz4_raw(src, n, out.data(), out_size);
      break;
    case kLz4Hadoop:
      // Arrow reads old files whose "LZ4" is a bare block the same way: try the framing, then a raw block.
      if (!lz4_hadoop(src, n, out.data(), out_size)) lz4_raw(src, n, out.data(), out_size);
      break;
    default:
      fail("compression ", codec_name(codec), " (", codec, ") is not supported");
  }
  return out;
}

}  // namespace ct::parquet

#include "parquet/column_chunk.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "parquet/codecs.h"
#include "parquet/delta.h"
#include "parquet/plain.h"
#include "parquet/rle.h"

namespace ct::parquet {
namespace {

// Level entries per chunk beyond which a chunk is treated as corrupt rather than allocated.
constexpr int64_t kMaxEntries = int64_t{1} << 26;

void decode_levels_rle(Span in, int max_level, size_t n, std::vector<int16_t>& out, const char* what) {
  std::vector<uint32_t> tmp(n);
  decode_rle_hybrid(in, level_bit_width(max_level), n, tmp.data());
  for (uint32_t v : tmp) {
    if (v > static_cast<uint32_t>(max_level)) fail(what, " level ", v, " exceeds the maximum ", max_level);
    out.push_back(static_cast<int16_t>(v));
  }
}

// Deprecated BIT_PACKED levels: most significant bit first, no run headers; returns the bytes used.
size_t decode_levels_bit_packed(Span in, int max_level, size_t n, std::vector<int16_t>& out,
                                const char* what) {
  const int w = level_bit_width(max_level);
  const size_t bytes = (n * static_cast<size_t>(w) + 7) / 8;
  if (bytes > in.n) fail(what, " BIT_PACKED levels need ", bytes, " bytes, page has ", in.n);
  size_t bit = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t v = 0;
    for (int b = 0; b < w; ++b, ++bit) v = (v << 1) | ((in.p[bit >> 3] >> (7 - (bit & 7))) & 1);
    if (v > static_cast<uint32_t>(max_level)) fail(what, " level ", v, " exceeds the maximum ", max_level);
    out.push_back(static_cast<int16_t>(v));
  }
  return bytes;
}

// v1 levels: RLE with a u32 length prefix, or the old BIT_PACKED form; advances `in`.
void read_v1_levels(Span& in, int encoding, int max_level, size_t n, std::vector<int16_t>& out,
                    const char* what) {
  if (encoding == kBitPacked) {
    const size_t used = decode_levels_bit_packed(in, max_level, n, out, what);
    in.p += used;
    in.n -= used;
    return;
  }
  if (encoding != kRle) fail(what, " levels encoded as ", encoding, " (expected RLE 3 or BIT_PACKED 4)");
  if (in.n < 4) fail(what, " levels length prefix ends early");
  uint32_t len;
  std::memcpy(&len, in.p, 4);
  if (len > in.n - 4) fail(what, " levels of ", len, " bytes, page has ", in.n - 4);
  decode_levels_rle(Span{in.p + 4, len}, max_level, n, out, what);
  in.p += 4 + len;
  in.n -= 4 + len;
}

void copy_from_dictionary(const Values& dict, Storage st, size_t dict_size, const std::vector<uint32_t>& idx,
                          Values& out) {
  for (uint32_t i : idx)
    if (i >= dict_size) fail("dictionary index ", i, " outside the dictionary of ", dict_size, " entries");
  switch (st) {
    case Storage::Ints:
      for (uint32_t i : idx) out.ints.push_back(dict.ints[i]);
      break;
    case Storage::Reals:
      for (uint32_t i : idx) out.reals.push_back(dict.reals[i]);
      break;
    case Storage::Bytes:
      for (uint32_t i : idx) out.bytes.push_back(dict.bytes[i]);
      break;
  }
}

const char* encoding_name(int e) {
  switch (e) {
    case kPlain:
      return "PLAIN";
    case kPlainDictionary:
      return "PLAIN_DICTIONARY";
    case kRle:
      return "RLE";
    case kBitPacked:
      return "BIT_PACKED";
    case kDeltaBinaryPacked:
      return "DELTA_BINARY_PACKED";
    case kDeltaLengthByteArray:
      return "DELTA_LENGTH_BYTE_ARRAY";
    case kDeltaByteArray:
      return "DELTA_BYTE_ARRAY";
    case kRleDictionary:
      return "RLE_DICTIONARY";
    case kByteStreamSplit:
      return "BYTE_STREAM_SPLIT";
    default:
      return "unknown encoding";
  }
}

struct ValueDecoder {
  const SchemaNode& leaf;
  ChunkData& out;
  const Values* dict = nullptr;
  size_t dict_size = 0;

  void decode(int encoding, Span in, size_t count) {
    const size_t before = out.values.size(out.storage);
    const int32_t type = leaf.physical;
    switch (encoding) {
      case kPlain:
        decode_plain(type, leaf.type_length, in, count, out.values);
        break;
      case kPlainDictionary:
      case kRleDictionary: {
        if (!dict) fail(encoding_name(encoding), " data page without a dictionary page before it");
        if (count == 0) break;
        if (in.n < 1) fail("dictionary indices lack their bit-width byte");
        std::vector<uint32_t> idx(count);
        decode_rle_hybrid(Span{in.p + 1, in.n - 1}, in.p[0], count, idx.data());
        copy_from_dictionary(*dict, out.storage, dict_size, idx, out.values);
        break;
      }
      case kRle: {
        if (type != kBoolean) fail("RLE values for a non-BOOLEAN column");
        if (in.n < 4) fail("RLE boolean values lack their length prefix");
        uint32_t len;
        std::memcpy(&len, in.p, 4);
        if (len > in.n - 4) fail("RLE boolean values of ", len, " bytes, page has ", in.n - 4);
        std::vector<uint32_t> v(count);
        decode_rle_hybrid(Span{in.p + 4, len}, 1, count, v.data());
        for (uint32_t b : v) out.values.ints.push_back(b);
        break;
      }
      case kDeltaBinaryPacked: {
        if (type != kInt32 && type != kInt64)
          fail("DELTA_BINARY_PACKED for a column that is not INT32/INT64");
        decode_delta_binary_packed(in, count, type == kInt32 ? 32 : 64, out.values.ints);
        break;
      }
      case kDeltaLengthByteArray:
        if (type != kByteArray) fail("DELTA_LENGTH_BYTE_ARRAY for a column that is not BYTE_ARRAY");
        decode_delta_length_byte_array(in, count, out.values.bytes);
        break;
      case kDeltaByteArray: {
        if (type != kByteArray && type != kFixedLenByteArray)
          fail("DELTA_BYTE_ARRAY for a non-byte-array column");
        std::unique_ptr<std::vector<uint8_t>> storage;
        decode_delta_byte_array(in, count, out.values.bytes, storage);
        out.buffers.push_back(std::move(storage));
        break;
      }
      case kByteStreamSplit: {
        auto storage = std::make_unique<std::vector<uint8_t>>();
        decode_byte_stream_split(type, leaf.type_length, in, count, out.values, *storage);
        out.buffers.push_back(std::move(storage));
        break;
      }
      default:
        fail("values encoded as ", encoding_name(encoding), " (", encoding,
             "), which this reader does not support");
    }
    const size_t got = out.values.size(out.storage) - before;
    if (got != count) fail(encoding_name(encoding), " gave ", got, " values, the levels call for ", count);
  }
};

}  // namespace

ChunkData read_column_chunk(const uint8_t* file, size_t file_size, const ColumnChunk& cc,
                            const SchemaNode& leaf, int max_def, int max_rep, int64_t rg_rows,
                            const std::string& where) {
  ChunkData out;
  out.storage = storage_of(leaf.physical);
  if (!cc.file_path.empty())
    fail(where, ": data lives in another file ('", cc.file_path, "'), which is not supported");
  if (!cc.has_meta_data) fail(where, ": column chunk has no ColumnMetaData (encrypted or corrupt)");
  const ColumnMetaData& m = cc.meta;
  if (m.type != leaf.physical)
    fail(where, ": chunk has physical type ", m.type, ", the schema says ", leaf.physical);
  if (m.num_values > kMaxEntries)
    fail(where, ": chunk claims ", m.num_values, " values (limit ", kMaxEntries, ")");
  if (max_rep == 0 && m.num_values != rg_rows)
    fail(where, ": chunk holds ", m.num_values, " values, the row group has ", rg_rows, " rows");
  // Arrow's rule: start at the dictionary page when its offset is set and precedes the data pages.
  int64_t start = m.data_page_offset;
  if (m.dictionary_page_offset > 0 && m.dictionary_page_offset < start) start = m.dictionary_page_offset;
  const int64_t size = static_cast<int64_t>(file_size);
  if (start < 4 || m.total_compressed_size > size || start > size - m.total_compressed_size)
    fail(where, ": chunk bytes [", start, ", +", m.total_compressed_size, ") lie outside the file of ", size,
         " bytes");
  const uint8_t* p = file + start;
  const uint8_t* end = p + m.total_compressed_size;

  // The footer's count is not trusted with memory: reserve a bounded amount, the pages prove the rest.
  const size_t expect = static_cast<size_t>(std::min<int64_t>(m.num_values, int64_t{1} << 20));
  out.rep.reserve(expect);
  out.def.reserve(expect);
  Values dict;
  bool has_dict = false;
  ValueDecoder values{leaf, out};
  int64_t entries = 0;
  for (int page = 0; entries < m.num_values; ++page) {
    const std::string page_where = str(where, ", page ", page);
    if (p >= end) fail(page_where, ": chunk ends after ", entries, " of ", m.num_values, " values");
    try {
      size_t header_size = 0;
      const PageHeader h = parse_page_header(p, end, "page header", &header_size);
      p += header_size;
      if (h.compressed_page_size > end - p)
        fail("page of ", h.compressed_page_size, " bytes, only ", end - p, " left in the chunk");
      const uint8_t* body = p;
      p += h.compressed_page_size;
      const size_t csize = static_cast<size_t>(h.compressed_page_size);
      const size_t usize = static_cast<size_t>(h.uncompressed_page_size);

      auto inflate = [&](const uint8_t* src, size_t n, size_t raw) -> Span {
        if (m.codec == kUncompressed) {
          if (n != raw) fail("uncompressed page of ", n, " bytes, header says ", raw);
          return Span{src, n};
        }
        out.buffers.push_back(std::make_unique<std::vector<uint8_t>>(decompress(m.codec, src, n, raw)));
        return Span{out.buffers.back()->data(), out.buffers.back()->size()};
      };

      if (h.type == kDictionaryPage) {
        if (!h.has_dict) fail("DICTIONARY_PAGE without a dictionary_page_header");
        if (has_dict) fail("a second dictionary page in the chunk");
        if (h.dict.encoding != kPlain && h.dict.encoding != kPlainDictionary)
          fail("dictionary page encoded as ", encoding_name(h.dict.encoding), " (expected PLAIN)");
        if (h.dict.num_values < 0 || static_cast<size_t>(h.dict.num_values) > usize * 8 + 8)
          fail("dictionary page claims ", h.dict.num_values, " entries in ", usize, " bytes");
        const Span body_span = inflate(body, csize, usize);
        decode_plain(leaf.physical, leaf.type_length, body_span, static_cast<size_t>(h.dict.num_values),
                     dict);
        ++out.pages[kDictionaryPage];
        has_dict = true;
        values.dict = &dict;
        values.dict_size = dict.size(out.storage);
        continue;
      }
      if (h.type >= 0 && h.type < 4) ++out.pages[h.type];
      if (h.type != kDataPage && h.type != kDataPageV2) continue;  // index pages and future types

      int32_t n = 0, encoding = 0;
      Span vals;
      const size_t level_base = out.def.size();
      if (h.type == kDataPage) {
        if (!h.has_v1) fail("DATA_PAGE without a data_page_header");
        n = h.v1.num_values;
        if (n < 0 || n > m.num_values - entries)
          fail("page holds ", n, " values, the chunk has ", m.num_values - entries, " left");
        encoding = h.v1.encoding;
        Span body_span = inflate(body, csize, usize);
        if (max_rep > 0)
          read_v1_levels(body_span, h.v1.rep_encoding, max_rep, static_cast<size_t>(n), out.rep,
                         "repetition");
        if (max_def > 0)
          read_v1_levels(body_span, h.v1.def_encoding, max_def, static_cast<size_t>(n), out.def,
                         "definition");
        vals = body_span;
      } else {
        if (!h.has_v2) fail("DATA_PAGE_V2 without a data_page_header_v2");
        const DataPageHeaderV2& v2 = h.v2;
        n = v2.num_values;
        if (n < 0 || n > m.num_values - entries)
          fail("page holds ", n, " values, the chunk has ", m.num_values - entries, " left");
        encoding = v2.encoding;
        if (v2.rep_levels_byte_length < 0 || v2.def_levels_byte_length < 0 ||
            static_cast<int64_t>(v2.rep_levels_byte_length) + v2.def_levels_byte_length >
                h.compressed_page_size ||
            static_cast<int64_t>(v2.rep_levels_byte_length) + v2.def_levels_byte_length >
                h.uncompressed_page_size)
          fail("level byte lengths ", v2.rep_levels_byte_length, " + ", v2.def_levels_byte_length,
               " exceed the page (", h.compressed_page_size, " bytes)");
        const size_t rl = static_cast<size_t>(v2.rep_levels_byte_length);
        const size_t dl = static_cast<size_t>(v2.def_levels_byte_length);
        if (max_rep > 0)
          decode_levels_rle(Span{body, rl}, max_rep, static_cast<size_t>(n), out.rep, "repetition");
        if (max_def > 0)
          decode_levels_rle(Span{body + rl, dl}, max_def, static_cast<size_t>(n), out.def, "definition");
        const uint8_t* vbody = body + rl + dl;
        const size_t vcsize = csize - rl - dl, vusize = usize - rl - dl;
        if (vcsize == 0) {
          // An empty values section (all nulls, or an empty page) is stored as zero bytes, not as an empty
          // compressed stream (parquet-testing's datapage_v2_empty_datapage.snappy.parquet).
          vals = Span{vbody, 0};
        } else if (v2.is_compressed && m.codec != kUncompressed) {
          out.buffers.push_back(
              std::make_unique<std::vector<uint8_t>>(decompress(m.codec, vbody, vcsize, vusize)));
          vals = Span{out.buffers.back()->data(), out.buffers.back()->size()};
        } else {
          vals = Span{vbody, vcsize};
        }
      }
      if (max_rep == 0) out.rep.resize(level_base + static_cast<size_t>(n), 0);
      if (max_def == 0) out.def.resize(level_base + static_cast<size_t>(n), 0);
      size_t present = 0;
      for (size_t i = level_base; i < out.def.size(); ++i) present += out.def[i] == max_def;
      if (max_rep > 0 && n > 0 && entries == 0 && out.rep[level_base] != 0)
        fail("first value of the chunk continues a row (repetition level ", out.rep[level_base], ")");
      values.decode(encoding, vals, present);
      if (encoding >= 0 && encoding < 32) out.encodings |= 1u << encoding;
      entries += n;
    } catch (const Error& e) {
      fail(page_where, ": ", e.what());
    }
  }
  return out;
}

}  // namespace ct::parquet

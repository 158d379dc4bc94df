// Edge cases no npm writer produces, as hand-made files: PLAIN_DICTIONARY pages (old pyarrow) with a PLAIN
// fallback page, deprecated BIT_PACKED levels, v2 pages with is_compressed=false next to compressed ones, a
// one-entry dictionary with bit width 0, legacy lists (a bare repeated field, the two-level "array" form), a
// MAP, required columns without definition levels, unsigned INT32, FIXED_LEN_BYTE_ARRAY and INT96, index
// pages to skip, Thrift fields the reader does not know (including the 32767 extension id), multi-member
// GZIP.
#include <snappy-c.h>
#include <zlib.h>

#include <cstring>

#include <gtest/gtest.h>

#include "core/error.h"
#include "parquet/metadata.h"
#include "parquet/parquet_file.h"
#include "parquet_test_util.h"

namespace ct::parquet {
namespace {

using nlohmann::json;

// Thrift compact protocol writer, just enough for footers and page headers.
struct W {
  std::string b;
  std::vector<int16_t> last{0};
  void byte(uint8_t v) { b.push_back(static_cast<char>(v)); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      byte(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    byte(static_cast<uint8_t>(v));
  }
  void zz(int64_t v) { varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void field(int16_t id, uint8_t t) {
    const int d = id - last.back();
    if (d > 0 && d <= 15) {
      byte(static_cast<uint8_t>(d << 4 | t));
    } else {
      byte(t);
      zz(id);
    }
    last.back() = id;
  }
  void i32(int16_t id, int64_t v) { field(id, 5), zz(v); }
  void i64(int16_t id, int64_t v) { field(id, 6), zz(v); }
  void str(int16_t id, const std::string& s) { field(id, 8), varint(s.size()), b += s; }
  void boolean(int16_t id, bool v) { field(id, v ? 1 : 2); }
  void begin(int16_t id) { field(id, 12), last.push_back(0); }
  void begin_elem() { last.push_back(0); }
  void end() { byte(0), last.pop_back(); }
  void list(int16_t id, uint8_t elem, size_t n) {
    field(id, 9);
    if (n < 15) {
      byte(static_cast<uint8_t>(n << 4 | elem));
    } else {
      byte(static_cast<uint8_t>(0xf0 | elem));
      varint(n);
    }
  }
};

std::string le32(uint32_t v) {
  return std::string(reinterpret_cast<const char*>(&v), 4);
}
std::string le64(uint64_t v) {
  return std::string(reinterpret_cast<const char*>(&v), 8);
}
std::string plain_str(const std::string& s) {
  return le32(static_cast<uint32_t>(s.size())) + s;
}

// One bit-packed run (LSB first) of `v`, padded to a multiple of 8 values.
std::string bitpacked(const std::vector<uint32_t>& v, int bw) {
  const size_t groups = (v.size() + 7) / 8;
  W w;
  w.varint(groups << 1 | 1);
  std::string bits(groups * static_cast<size_t>(bw), '\0');
  size_t pos = 0;
  for (uint32_t x : v)
    for (int k = 0; k < bw; ++k, ++pos)
      if (x >> k & 1) bits[pos / 8] = static_cast<char>(bits[pos / 8] | (1 << (pos % 8)));
  return w.b + bits;
}
std::string rle_run(uint64_t count, uint32_t value, int bw) {
  W w;
  w.varint(count << 1);
  for (int k = 0; k < (bw + 7) / 8; ++k) w.byte(static_cast<uint8_t>(value >> (8 * k)));
  return w.b;
}
std::string v1_levels(const std::string& rle) {
  return le32(static_cast<uint32_t>(rle.size())) + rle;
}

std::string snappy(const std::string& s) {
  size_t n = snappy_max_compressed_length(s.size());
  std::string out(n, '\0');
  EXPECT_EQ(snappy_compress(s.data(), s.size(), out.data(), &n), SNAPPY_OK);
  out.resize(n);
  return out;
}
std::string gzip(const std::string& s) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, s.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  z.avail_in = static_cast<uInt>(s.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct PageOpts {
  int type = kDataPage;
  int32_t num_values = 0, encoding = kPlain, def_enc = kRle, rep_enc = kRle;
  int32_t num_nulls = 0, num_rows = 0, def_len = 0, rep_len = 0;  // v2
  int is_compressed = -1;                                         // v2: -1 absent, else 0/1
  int32_t uncompressed = -1;                                      // -1: body size
  bool unknown_fields = false;
};

std::string page(const std::string& body, const PageOpts& o) {
  W w;
  w.begin_elem();
  w.i32(1, o.type);
  w.i32(2, o.uncompressed >= 0 ? o.uncompressed : static_cast<int32_t>(body.size()));
  w.i32(3, static_cast<int32_t>(body.size()));
  if (o.type == kDataPage) {
    w.begin(5);
    w.i32(1, o.num_values), w.i32(2, o.encoding), w.i32(3, o.def_enc), w.i32(4, o.rep_enc);
    w.end();
  } else if (o.type == kDictionaryPage) {
    w.begin(7);
    w.i32(1, o.num_values), w.i32(2, o.encoding), w.boolean(3, false);
    w.end();
  } else if (o.type == kDataPageV2) {
    w.begin(8);
    w.i32(1, o.num_values), w.i32(2, o.num_nulls), w.i32(3, o.num_rows), w.i32(4, o.encoding);
    w.i32(5, o.def_len), w.i32(6, o.rep_len);
    if (o.is_compressed >= 0) w.boolean(7, o.is_compressed == 1);
    w.end();
  }
  if (o.unknown_fields) {
    w.str(20, "future");
    w.begin(21);
    w.list(1, 5, 2), w.zz(1), w.zz(2);
    w.end();
  }
  w.end();
  return w.b + body;
}

struct El {
  std::string name;
  int type = -1, rep = -1, children = 0, converted = -1, type_length = 0;
};

struct Col {
  std::vector<std::string> path;
  int type = kInt32, codec = kUncompressed;
  std::vector<std::string> pages;  // a dictionary page first when dict is true
  bool dict = false;
  int64_t num_values = 0;
};

std::string file(const std::vector<El>& schema, const std::vector<Col>& cols, int64_t rows) {
  std::string out = "PAR1";
  std::vector<std::pair<int64_t, int64_t>> at;  // (start, size)
  for (const Col& c : cols) {
    const int64_t start = static_cast<int64_t>(out.size());
    for (const auto& p : c.pages) out += p;
    at.emplace_back(start, static_cast<int64_t>(out.size()) - start);
  }
  W w;
  w.begin_elem();
  w.i32(1, 2);
  w.list(2, 12, schema.size());
  for (const El& e : schema) {
    w.begin_elem();
    if (e.type >= 0) w.i32(1, e.type);
    if (e.type_length) w.i32(2, e.type_length);
    if (e.rep >= 0) w.i32(3, e.rep);
    w.str(4, e.name);
    if (e.children) w.i32(5, e.children);
    if (e.converted >= 0) w.i32(6, e.converted);
    w.i32(9, 7);  // field_id, unused by the reader
    w.end();
  }
  w.i64(3, rows);
  w.list(4, 12, 1);
  w.begin_elem();
  w.list(1, 12, cols.size());
  for (size_t k = 0; k < cols.size(); ++k) {
    const Col& c = cols[k];
    w.begin_elem();
    w.i64(2, at[k].first);
    w.begin(3);
    w.i32(1, c.type);
    w.list(2, 5, 1), w.zz(kPlain);
    w.list(3, 8, c.path.size());
    for (const auto& p : c.path) w.varint(p.size()), w.b += p;
    w.i32(4, c.codec);
    w.i64(5, c.num_values);
    w.i64(6, at[k].second);
    w.i64(7, at[k].second);
    w.i64(9, c.dict ? at[k].first + static_cast<int64_t>(c.pages[0].size()) : at[k].first);
    if (c.dict) w.i64(11, at[k].first);
    w.end();
    w.end();
  }
  w.i64(2, 100);
  w.i64(3, rows);
  w.end();
  w.str(6, "coretrain handmade_test");
  w.str(32767, "extension bytes");  // BinaryProtocolExtensions: skipped by type
  w.end();
  out += w.b + le32(static_cast<uint32_t>(w.b.size())) + "PAR1";
  return out;
}

json read_all(const std::string& bytes, const std::string& col) {
  auto f = ParquetFile::from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                    "handmade.parquet");
  const Table t = f->read({col});
  json out = json::array();
  for (const auto& v : t.columns[0]) out.push_back(test::to_json(v));
  return out;
}

TEST(ParquetHandmade, PlainDictionaryWithPlainFallbackAndIndexPage) {
  PageOpts dict{kDictionaryPage, 3, kPlainDictionary};
  PageOpts p1{kDataPage, 5, kPlainDictionary};
  p1.unknown_fields = true;
  PageOpts p2{kDataPage, 1, kPlain};
  PageOpts index{kIndexPage};
  const std::string defs1 = v1_levels(bitpacked({1, 0, 1, 1, 1}, 1));
  Col c{{"x"},
        kInt32,
        kUncompressed,
        {page(le32(10) + le32(20) + le32(30), dict), page(defs1 + "\x02" + bitpacked({0, 1, 0, 2}, 2), p1),
         page("", index), page(v1_levels(rle_run(1, 1, 1)) + le32(40), p2)},
        true,
        6};
  const std::string f = file({{"schema", -1, -1, 1}, {"x", kInt32, kOptional}}, {c}, 6);
  EXPECT_EQ(read_all(f, "x"), json::parse("[10, null, 20, 10, 30, 40]"));
}

TEST(ParquetHandmade, BitPackedLevelsAndRequiredColumns) {
  PageOpts p{kDataPage, 3, kPlain};
  p.def_enc = kBitPacked;
  // MSB-first levels 1,0,1.
  Col y{{"y"}, kInt64, kUncompressed, {page(std::string("\xa0", 1) + le64(1) + le64(3), p)}, false, 3};
  PageOpts q{kDataPage, 3, kPlain};
  Col r{{"r"}, kInt32, kUncompressed, {page(le32(0xffffffffu) + le32(7) + le32(0x80000000u), q)}, false, 3};
  Col fl{{"fl"}, kFixedLenByteArray, kUncompressed, {page("abcdefghi", q)}, false, 3};
  Col i96{{"t"}, kInt96, kUncompressed, {page(std::string(36, 'z'), q)}, false, 3};
  const std::string f = file({{"schema", -1, -1, 4},
                              {"y", kInt64, kOptional},
                              {"r", kInt32, kRequired, 0, 13 /* UINT_32 */},
                              {"fl", kFixedLenByteArray, kRequired, 0, -1, 3},
                              {"t", kInt96, kRequired}},
                             {y, r, fl, i96}, 3);
  EXPECT_EQ(read_all(f, "y"), json::parse("[1, null, 3]"));
  EXPECT_EQ(read_all(f, "r"), json::parse("[4294967295, 7, 2147483648]"));
  EXPECT_EQ(read_all(f, "fl"), json::parse(R"(["abc", "def", "ghi"])"));
  EXPECT_EQ(read_all(f, "t")[2], std::string(12, 'z'));
}

TEST(ParquetHandmade, V2PagesCompressedOrNotAndOneEntryDictionary) {
  // Required strings, no levels; page 1 says is_compressed=false in a SNAPPY chunk, page 2 is compressed.
  const std::string raw1 = plain_str("a") + plain_str("bc");
  const std::string raw2 = plain_str("déf");
  PageOpts a{kDataPageV2, 2, kPlain};
  a.num_rows = 2, a.is_compressed = 0;
  PageOpts b{kDataPageV2, 1, kPlain};
  b.num_rows = 1, b.uncompressed = static_cast<int32_t>(raw2.size());
  Col s{{"s"}, kByteArray, kSnappy, {page(raw1, a), page(snappy(raw2), b)}, false, 3};
  // A one-entry dictionary: indices of bit width 0 (no value bytes in the RLE run).
  PageOpts d{kDictionaryPage, 1, kPlain};
  PageOpts dp{kDataPageV2, 3, kRleDictionary};
  dp.num_rows = 3;
  Col o{{"o"},         kByteArray,
        kUncompressed, {page(plain_str("only"), d), page(std::string("\x00", 1) + rle_run(3, 0, 0), dp)},
        true,          3};
  const std::string f =
      file({{"schema", -1, -1, 2}, {"s", kByteArray, kRequired, 0, 0}, {"o", kByteArray, kRequired, 0, 0}},
           {s, o}, 3);
  EXPECT_EQ(read_all(f, "s"), json::parse(R"(["a", "bc", "déf"])"));
  EXPECT_EQ(read_all(f, "o"), json::parse(R"(["only", "only", "only"])"));
}

TEST(ParquetHandmade, LegacyListsAndMap) {
  PageOpts p{kDataPage, 4, kPlain};
  // Bare repeated int32 r: [[1,2],[],[3]] -> (rep,def) (0,1)(1,1)(0,0)(0,1).
  const std::string r_levels = v1_levels(bitpacked({0, 1, 0, 0}, 1)) + v1_levels(bitpacked({1, 1, 0, 1}, 1));
  Col r{{"r"}, kInt32, kUncompressed, {page(r_levels + le32(1) + le32(2) + le32(3), p)}, false, 4};
  // optional group L (LIST) { repeated int32 array; }: [[5,6], null, []] -> (0,2)(1,2)(0,0)(0,1).
  PageOpts q{kDataPage, 4, kPlain};
  const std::string l_levels = v1_levels(bitpacked({0, 1, 0, 0}, 1)) + v1_levels(bitpacked({2, 2, 0, 1}, 2));
  Col l{{"L", "array"}, kInt32, kUncompressed, {page(l_levels + le32(5) + le32(6), q)}, false, 4};
  // optional group m (MAP) { repeated group key_value { required binary key; optional int32 value; } }
  // rows {a:1, b:null}, null, {} (with one row more to match: {c:2}).
  PageOpts mk{kDataPage, 5, kPlain};
  const std::string k_levels =
      v1_levels(bitpacked({0, 1, 0, 0, 0}, 1)) + v1_levels(bitpacked({2, 2, 0, 1, 2}, 2));
  Col key{{"m", "key_value", "key"},
          kByteArray,
          kUncompressed,
          {page(k_levels + plain_str("a") + plain_str("b") + plain_str("c"), mk)},
          false,
          5};
  const std::string v_levels =
      v1_levels(bitpacked({0, 1, 0, 0, 0}, 1)) + v1_levels(bitpacked({3, 2, 0, 1, 3}, 2));
  Col val{
      {"m", "key_value", "value"}, kInt32, kUncompressed, {page(v_levels + le32(1) + le32(2), mk)}, false, 5};
  // Row counts differ per column group, so three files.
  EXPECT_EQ(read_all(file({{"schema", -1, -1, 1}, {"r", kInt32, kRepeated}}, {r}, 3), "r"),
            json::parse("[[1, 2], [], [3]]"));
  EXPECT_EQ(
      read_all(
          file({{"schema", -1, -1, 1}, {"L", -1, kOptional, 1, kList}, {"array", kInt32, kRepeated}}, {l}, 3),
          "L"),
      json::parse("[[5, 6], null, []]"));
  const std::string mf = file({{"schema", -1, -1, 1},
                               {"m", -1, kOptional, 1, kMap},
                               {"key_value", -1, kRepeated, 2, kMapKeyValue},
                               {"key", kByteArray, kRequired, 0, kUtf8},
                               {"value", kInt32, kOptional}},
                              {key, val}, 4);
  EXPECT_EQ(read_all(mf, "m"),
            json::parse(R"([[{"key": "a", "value": 1}, {"key": "b", "value": null}], null, [],
                                                [{"key": "c", "value": 2}]])"));
}

TEST(ParquetHandmade, GzipWithTwoMembers) {
  const std::string body = v1_levels(rle_run(4, 1, 1)) + le32(1) + le32(2) + le32(3) + le32(4);
  PageOpts p{kDataPage, 4, kPlain};
  p.uncompressed = static_cast<int32_t>(body.size());
  Col c{{"g"}, kInt32, kGzip, {page(gzip(body.substr(0, 7)) + gzip(body.substr(7)), p)}, false, 4};
  EXPECT_EQ(read_all(file({{"schema", -1, -1, 1}, {"g", kInt32, kOptional}}, {c}, 4), "g"),
            json::parse("[1, 2, 3, 4]"));
}

TEST(ParquetHandmade, LevelsThatDisagreeAreOneLine) {
  // Two leaves of one struct whose levels disagree (one says null, the other holds a value).
  PageOpts p{kDataPage, 2, kPlain};
  Col a{{"st", "a"}, kInt32, kUncompressed, {page(v1_levels(bitpacked({2, 0}, 2)) + le32(1), p)}, false, 2};
  Col b{{"st", "b"}, kInt32, kUncompressed, {page(v1_levels(bitpacked({2, 2}, 2)) + le32(1) + le32(2), p)},
        false,       2};
  const std::string f = file(
      {{"schema", -1, -1, 1}, {"st", -1, kOptional, 2}, {"a", kInt32, kOptional}, {"b", kInt32, kOptional}},
      {a, b}, 2);
  try {
    read_all(f, "st");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("handmade.parquet: row group 0, column 'st': leaf st.b has a value where"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ct::parquet

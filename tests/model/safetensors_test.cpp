// safetensors reader/writer: round trips, HF layout, and one test per malformed-file rule (each bad file is
// written here, byte by byte).
#include "model/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/error.h"
#include "core/fs.h"

namespace ct::model {
namespace {

namespace stdfs = std::filesystem;
using ::testing::HasSubstr;

stdfs::path temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir = stdfs::temp_directory_path() /
             str("ct_st_", ::getpid(), "_", info->test_suite_name(), "_", info->name());
  stdfs::remove_all(dir);
  stdfs::create_directories(dir);
  return dir;
}

// 8-byte little-endian length + header + buffer, with the length given explicitly so tests can lie.
std::string raw_file(uint64_t header_len, const std::string& header, const std::string& buffer) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &header_len, 8);
  return out + header + buffer;
}
std::string file_with(const std::string& header, const std::string& buffer) {
  return raw_file(header.size(), header, buffer);
}

// Expects parsing `bytes` to fail with a one-line message containing every fragment.
void expect_bad(const std::string& bytes, std::initializer_list<std::string> fragments) {
  try {
    SafetensorsFile::from_bytes(bytes, "bad.safetensors");
    ADD_FAILURE() << "accepted a malformed file";
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (std::getenv("CT_SHOW_ERRORS")) std::printf("%s\n", msg.c_str());
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_THAT(msg, HasSubstr("bad.safetensors")) << msg;
    for (const auto& f : fragments) EXPECT_THAT(msg, HasSubstr(f));
  }
}

const std::string kGoodTensor = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
const std::string kEightBytes(8, '\x01');

TEST(Safetensors, RoundTripKeepsValuesOrderAndLayout) {
  const auto dir = temp_dir();
  const std::vector<float> w = {1.5f, -2.25f, 3.0f, 0.0f, 1e-30f, -7.0f};
  const std::vector<uint16_t> h = {0x3c00, 0xc000};  // F16 1.0, -2.0
  const std::vector<int64_t> ids = {7, -1, 1LL << 40};
  const float scalar = 42.0f;
  const std::string path = (dir / "m.safetensors").string();
  write_safetensors(path, {{"z.weight", "F32", {2, 3}, w.data()},
                           {"a.half", "F16", {2}, h.data()},
                           {"m.ids", "I64", {3}, ids.data()},
                           {"s.scalar", "F32", {}, &scalar},
                           {"e.empty", "F32", {0, 4}, nullptr}});

  // HF layout: length field, space-padded header, data at an 8-byte aligned offset, tensors sorted by name.
  const std::string bytes = fs::read_file(path);
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  const std::string header = bytes.substr(8, n);
  EXPECT_EQ(header.rfind(R"({"__metadata__":{"format":"pt"},)", 0), 0u) << header;
  EXPECT_LT(header.find("\"a.half\""), header.find("\"e.empty\""));
  EXPECT_LT(header.find("\"m.ids\""), header.find("\"s.scalar\""));
  EXPECT_LT(header.find("\"s.scalar\""), header.find("\"z.weight\""));
  EXPECT_EQ(bytes.size(), 8 + n + 4 + 0 + 24 + 4 + 24);

  const auto f = SafetensorsFile::open(path);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  ASSERT_EQ(f.tensors().size(), 5u);
  EXPECT_EQ(f.tensors()[0].name, "a.half");  // buffer order
  EXPECT_EQ(f.at("z.weight").shape, (Shape{2, 3}));
  EXPECT_EQ(f.at("z.weight").dtype, "F32");
  EXPECT_EQ(f.read_f32("z.weight"), w);
  EXPECT_EQ(f.read_f32("a.half"), (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(f.at("s.scalar").shape, Shape{});
  EXPECT_EQ(f.read_f32("s.scalar"), std::vector<float>{42.0f});
  EXPECT_EQ(f.at("e.empty").numel(), 0);
  EXPECT_TRUE(f.read_f32("e.empty").empty());
  const auto raw = f.bytes(f.at("m.ids"));
  ASSERT_EQ(raw.size(), 24u);
  std::vector<int64_t> back(3);
  std::memcpy(back.data(), raw.data(), 24);
  EXPECT_EQ(back, ids);
  EXPECT_EQ(f.find("nope"), nullptr);

  // Nothing but the target is left in the folder (temp + rename).
  int entries = 0;
  for (const auto& e : stdfs::directory_iterator(dir)) entries += 1 + 0 * e.is_regular_file();
  EXPECT_EQ(entries, 1);
  stdfs::remove_all(dir);
}

TEST(Safetensors, GivenOrderIsKeptWhenNotSorting) {
  const std::vector<float> a = {1}, b = {2, 3};
  const std::string header =
      safetensors_header({{"z", "F32", {1}, a.data()}, {"a", "F32", {2}, b.data()}}, {});
  EXPECT_EQ(header.rfind(R"({"z":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":)", 0), 0u) << header;
  EXPECT_EQ(header.size() % 8, 0u);
  const auto dir = temp_dir();
  const std::string path = (dir / "o.safetensors").string();
  write_safetensors(path, {{"z", "F32", {1}, a.data()}, {"a", "F32", {2}, b.data()}}, {}, false);
  const auto f = SafetensorsFile::open(path);
  EXPECT_EQ(f.tensors()[0].name, "z");
  EXPECT_EQ(f.read_f32("a"), b);
  EXPECT_TRUE(f.metadata().empty());
  stdfs::remove_all(dir);
}

TEST(Safetensors, ReplacesExistingFileAtomically) {
  const auto dir = temp_dir();
  const std::string path = (dir / "m.safetensors").string();
  const std::vector<float> one = {1}, two = {2, 2};
  write_safetensors(path, {{"x", "F32", {1}, one.data()}});
  write_safetensors(path, {{"x", "F32", {2}, two.data()}});
  EXPECT_EQ(SafetensorsFile::open(path).read_f32("x"), two);
  int entries = 0;
  for (const auto& e : stdfs::directory_iterator(dir)) entries += e.is_regular_file();
  EXPECT_EQ(entries, 1);
  stdfs::remove_all(dir);
}

TEST(Safetensors, WriterRejectsBadInputWithoutWritingAFile) {
  const auto dir = temp_dir();
  const std::string path = (dir / "m.safetensors").string();
  const std::vector<float> v = {1};
  EXPECT_THROW(write_safetensors(path, {{"x", "F32", {1}, v.data()}, {"x", "F32", {1}, v.data()}}), Error);
  EXPECT_THROW(write_safetensors(path, {{"x", "Q7", {1}, v.data()}}), Error);
  EXPECT_THROW(write_safetensors(path, {{"x", "F32", {-1}, v.data()}}), Error);
  EXPECT_THROW(write_safetensors(path, {{"__metadata__", "F32", {1}, v.data()}}), Error);
  EXPECT_THROW(write_safetensors(path, {{"x", "F32", {1}, nullptr}}), Error);
  EXPECT_FALSE(stdfs::exists(path));
  try {
    write_safetensors((dir / "no" / "such" / "dir.safetensors").string(), {{"x", "F32", {1}, v.data()}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no/such/dir.safetensors"));
  }
  stdfs::remove_all(dir);
}

TEST(Safetensors, ConvertsHalfAndBfloat16ToF32) {
  // F16: 1, -2, 65504 (max), smallest subnormal 2^-24, inf, -0.
  const std::vector<uint16_t> h = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x8000, 0x0200};
  // BF16: 1, -3.5, 1e38-ish, smallest subnormal.
  const std::vector<uint16_t> b = {0x3f80, 0xc060, 0x7f00, 0x0001};
  const std::string buf = std::string(reinterpret_cast<const char*>(h.data()), 14) +
                          std::string(reinterpret_cast<const char*>(b.data()), 8);
  const auto f =
      SafetensorsFile::from_bytes(file_with(R"({"h":{"dtype":"F16","shape":[7],"data_offsets":[0,14]},)"
                                            R"("b":{"dtype":"BF16","shape":[2,2],"data_offsets":[14,22]}})",
                                            buf),
                                  "conv");
  const auto hf = f.read_f32("h");
  EXPECT_EQ(hf[0], 1.0f);
  EXPECT_EQ(hf[1], -2.0f);
  EXPECT_EQ(hf[2], 65504.0f);
  EXPECT_EQ(hf[3], std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(hf[4]) && hf[4] > 0);
  EXPECT_TRUE(hf[5] == 0.0f && std::signbit(hf[5]));
  EXPECT_EQ(hf[6], std::ldexp(1.0f, -15));  // subnormal 0x200 = 2^-15
  const auto bf = f.read_f32("b");
  EXPECT_EQ(bf[0], 1.0f);
  EXPECT_EQ(bf[1], -3.5f);
  EXPECT_EQ(bf[2], std::ldexp(1.0f, 127));
  EXPECT_EQ(bf[3], std::ldexp(1.0f, -133));
}

TEST(Safetensors, RejectsNonFloatConversionNamingTensorAndDtype) {
  const auto f = SafetensorsFile::from_bytes(
      file_with(R"({"ids":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", kEightBytes),
      "ids.safetensors");
  try {
    f.read_f32("ids");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("ids.safetensors"));
    EXPECT_THAT(e.what(), HasSubstr("\"ids\""));
    EXPECT_THAT(e.what(), HasSubstr("I64"));
  }
  try {
    f.read_f32("missing.weight");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing.weight"));
  }
}

TEST(Safetensors, AcceptsEmptyFileAndIgnoresPaddingSpaces) {
  const auto f = SafetensorsFile::from_bytes(file_with("{}      ", ""), "empty");
  EXPECT_TRUE(f.tensors().empty());
  const auto g = SafetensorsFile::from_bytes(file_with("{" + kGoodTensor + "}  ", kEightBytes), "pad");
  EXPECT_EQ(g.tensors().size(), 1u);
}

TEST(SafetensorsBad, FileShorterThanLengthField) {
  expect_bad("", {"0 bytes", "shorter than"});
  expect_bad(std::string(7, '\0'), {"7 bytes"});
  const auto dir = temp_dir();
  const std::string path = (dir / "short.safetensors").string();
  fs::write_file_atomic(path, "abc");
  try {
    SafetensorsFile::open(path);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr("3 bytes"));
  }
  EXPECT_THROW(SafetensorsFile::open((dir / "absent.safetensors").string()), Error);
  EXPECT_THROW(SafetensorsFile::open(dir.string()), Error);  // a folder
  stdfs::remove_all(dir);
}

TEST(SafetensorsBad, AbsurdHeaderLength) {
  expect_bad(raw_file(200'000'000, "{}", ""), {"200000000", "100000000"});
  expect_bad(raw_file(~0ULL, "{}", ""), {"header length"});
  expect_bad(raw_file(50, "{}", ""), {"header length 50", "exceeds the 2 bytes"});
  expect_bad(raw_file(0, "", ""), {"header length 0"});
}

TEST(SafetensorsBad, HeaderNotJsonObject) {
  expect_bad(file_with("{\"a\":", ""), {"not valid UTF-8 JSON"});
  expect_bad(file_with("[1,2,3]", ""), {"array", "expected an object"});
  expect_bad(file_with("\"\xff\xfe\"", ""), {"not valid UTF-8 JSON"});
  expect_bad(file_with("{\"\xc3\x28\":1}", ""), {"not valid UTF-8 JSON"});
  expect_bad(file_with("{}x", ""), {"not valid UTF-8 JSON"});
  try {
    SafetensorsFile::from_bytes(file_with("{\"\xc3\x28\xff\":1}", ""), "u");
    ADD_FAILURE();
  } catch (const Error& e) {
    for (const char* p = e.what(); *p; ++p) EXPECT_LT(static_cast<unsigned char>(*p), 0x80) << e.what();
  }
}

TEST(SafetensorsBad, EntryNotAnObject) {
  expect_bad(file_with(R"({"a":[1,2]})", ""), {"\"a\"", "expected an object"});
  expect_bad(file_with(R"({"a":"F32"})", ""), {"\"a\"", "string"});
}

TEST(SafetensorsBad, UnknownOrMissingDtype) {
  expect_bad(file_with(R"({"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", kEightBytes),
             {"\"a\"", "F33"});
  expect_bad(file_with(R"({"a":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})", "x"), {"\"a\"", "F4"});
  expect_bad(file_with(R"({"a":{"dtype":7,"shape":[2],"data_offsets":[0,8]}})", kEightBytes),
             {"\"a\"", "dtype"});
  expect_bad(file_with(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", kEightBytes), {"\"a\"", "dtype"});
  // A name with a newline escape still gives a one-line message (expect_bad checks).
  expect_bad(file_with(R"({"a\nb":{"dtype":"X","shape":[2],"data_offsets":[0,8]}})", kEightBytes), {"a?b"});
}

TEST(SafetensorsBad, ShapeNotListOfNonNegativeInts) {
  const std::string tail = R"(,"data_offsets":[0,8]}})";
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":[-2])" + tail, kEightBytes), {"\"a\"", "shape [-2]"});
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":[2.0])" + tail, kEightBytes), {"\"a\"", "shape"});
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":"2")" + tail, kEightBytes), {"\"a\"", "shape"});
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":[[2]])" + tail, kEightBytes), {"\"a\"", "shape"});
  expect_bad(file_with(R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", kEightBytes), {"\"a\"", "shape"});
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,4])" + tail, kEightBytes),
             {"\"a\"", "overflow"});
}

TEST(SafetensorsBad, DataOffsetsNotBeginEnd) {
  const std::string head = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":)";
  expect_bad(file_with(head + "[0]}}", kEightBytes), {"\"a\"", "data_offsets", "[0]"});
  expect_bad(file_with(head + "[0,8,8]}}", kEightBytes), {"\"a\"", "data_offsets"});
  expect_bad(file_with(head + "[-1,7]}}", kEightBytes), {"\"a\"", "data_offsets"});
  expect_bad(file_with(head + "[0,\"8\"]}}", kEightBytes), {"\"a\"", "data_offsets"});
  expect_bad(file_with(head + "{\"b\":0}}}", kEightBytes), {"\"a\"", "data_offsets"});
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":[2]}})", kEightBytes),
             {"\"a\"", "data_offsets", "nothing"});
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", kEightBytes),
             {"\"a\"", "[8, 0]", "begin > end"});
}

TEST(SafetensorsBad, ByteSpanDisagreesWithShapeAndDtype) {
  // Header lies about the shape: 3 floats need 12 bytes, offsets give 8.
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", kEightBytes),
             {"\"a\"", "span 8 bytes", "expected 12", "F32 [3]"});
  // Header lies about the dtype: BF16 [2] is 4 bytes.
  expect_bad(file_with(R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,8]}})", kEightBytes),
             {"\"a\"", "expected 4"});
}

TEST(SafetensorsBad, OffsetsPastTheBufferOrTruncatedFile) {
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", kEightBytes),
             {"\"a\"", "past the 8-byte data buffer"});
  // A real file cut short.
  const auto dir = temp_dir();
  const std::string path = (dir / "cut.safetensors").string();
  const std::vector<float> v(100, 1.0f);
  write_safetensors(path, {{"w", "F32", {10, 10}, v.data()}});
  std::string bytes = fs::read_file(path);
  bytes.resize(bytes.size() - 5);
  fs::write_file_atomic(path, bytes);
  try {
    SafetensorsFile::open(path);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr("\"w\""));
    EXPECT_THAT(e.what(), HasSubstr("truncated"));
  }
  // Cut inside the header.
  bytes.resize(20);
  fs::write_file_atomic(path, bytes);
  EXPECT_THROW(SafetensorsFile::open(path), Error);
  stdfs::remove_all(dir);
}

TEST(SafetensorsBad, TensorsMustTileTheBuffer) {
  const std::string sixteen(16, '\0');
  // Overlap: b starts inside a.
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                       std::string(12, '\0')),
             {"\"b\"", "overlap"});
  // Same range twice.
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                       kEightBytes),
             {"overlap"});
  // Gap before b.
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                       sixteen),
             {"\"b\"", "gap after byte 4"});
  // Gap at the start.
  expect_bad(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", kEightBytes),
             {"\"a\"", "gap after byte 0"});
  // Trailing bytes nobody owns.
  expect_bad(file_with("{" + kGoodTensor + "}", sixteen), {"cover 8 bytes", "holds 16"});
  expect_bad(file_with("{}", "xyz"), {"cover 0 bytes", "holds 3"});
}

TEST(SafetensorsBad, DuplicateKeys) {
  expect_bad(file_with("{" + kGoodTensor + "," + kGoodTensor + "}", kEightBytes), {"duplicate key \"a\""});
  expect_bad(
      file_with(R"({"a":{"dtype":"F32","dtype":"I32","shape":[2],"data_offsets":[0,8]}})", kEightBytes),
      {"duplicate key \"dtype\""});
  expect_bad(file_with(R"({"__metadata__":{"k":"1","k":"2"}})", ""), {"duplicate key \"k\""});
}

TEST(SafetensorsBad, MetadataMustMapStringsToStrings) {
  expect_bad(file_with(R"({"__metadata__":["pt"]})", ""), {"__metadata__", "expected an object"});
  expect_bad(file_with(R"({"__metadata__":{"format":1}})", ""),
             {"__metadata__", "\"format\"", "expected a string"});
  const auto ok =
      SafetensorsFile::from_bytes(file_with(R"({"__metadata__":{"format":"pt","x":""}})", ""), "m");
  EXPECT_EQ(ok.metadata().at("x"), "");
}

}  // namespace
}  // namespace ct::model

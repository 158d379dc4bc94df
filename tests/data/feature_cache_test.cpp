// Feature cache: the task commands' FeatureColumns load back equal, a damaged file is a one-line error naming
// it, the checksum catching a flipped byte; the cache folder follows --cache_dir and HF's environment. qa's
// FeatureSet form: tests/tasks/question_answering/qa_feature_cache_test.cpp.
#include "data/feature_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/fs.h"
#include "test_util.h"

namespace ct::data {
namespace {

using testing::expect_error;
using testing::TempDir;

TEST(FeatureCache, ColumnsRoundTrip) {
  TempDir dir;
  FeatureColumns c;
  c.add("input_ids", {{101, 7, 102}, {}, {101, 102}});
  c.add("labels", {{-100, 3, -100}, {}, {-100, -100}});
  c.add("empty", {});
  const std::string path = dir.path() + "/sub/cols.bin";
  EXPECT_FALSE(load_feature_columns(path).has_value());
  save_feature_columns(path, c);
  auto back = load_feature_columns(path);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->names, c.names);
  EXPECT_EQ(back->columns, c.columns);
  EXPECT_EQ(back->take("labels", path), c.columns[1]);
  expect_error([&] { back->take("token_type_ids", path); }, {path, "no column 'token_type_ids'"});
}

TEST(FeatureCache, DamagedColumnFilesAreNamed) {
  TempDir dir;
  FeatureColumns c;
  c.add("input_ids", {{101, 7, 8, 9, 102}, {101, 102}});
  const std::string good = dir.path() + "/good.bin";
  save_feature_columns(good, c);
  std::string bytes = fs::read_file(good);
  const auto cut = dir.write("cut.bin", bytes.substr(0, bytes.size() - 9));
  expect_error([&] { load_feature_columns(cut); }, {cut, "corrupt feature cache"});
  const auto tiny = dir.write("tiny.bin", bytes.substr(0, 10));
  expect_error([&] { load_feature_columns(tiny); }, {tiny, "truncated"});
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  const auto flip = dir.write("flip.bin", flipped);
  expect_error([&] { load_feature_columns(flip); }, {flip, "checksum"});
  // Every byte flipped and every length cut short: an error naming the file, never a crash or a wrong load.
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string b = bytes;
    b[i] = static_cast<char>(b[i] ^ 0x01);
    const auto p = dir.write("mut.bin", b);
    expect_error([&] { load_feature_columns(p); }, {p});
  }
  for (size_t n = 0; n < bytes.size(); ++n) {
    const auto p = dir.write("short.bin", bytes.substr(0, n));
    expect_error([&] { load_feature_columns(p); }, {p});
  }
}

TEST(FeatureCache, FolderFollowsCacheDir) {
  EXPECT_EQ(feature_cache_dir("/x/mine"), "/x/mine/coretrain-features");
  EXPECT_EQ(feature_cache_file_name(0xabcULL), "0000000000000abc.bin");
}

TEST(FeatureCache, FolderFollowsHfEnvironment) {
  const char* saved = std::getenv("HF_DATASETS_CACHE");
  const std::string keep = saved ? saved : "";
  ::setenv("HF_DATASETS_CACHE", "/x/ds", 1);
  EXPECT_EQ(feature_cache_dir(), "/x/ds/coretrain-features");
  ::unsetenv("HF_DATASETS_CACHE");
  ::setenv("HF_HOME", "/x/hf", 1);
  EXPECT_EQ(feature_cache_dir(), "/x/hf/datasets/coretrain-features");
  ::unsetenv("HF_HOME");
  if (saved) ::setenv("HF_DATASETS_CACHE", keep.c_str(), 1);
}

}  // namespace
}  // namespace ct::data

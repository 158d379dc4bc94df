// Feature cache: a saved set loads back equal (every window, label and offset), the hash sees any change,
// the tokenizer fingerprint follows vocab and options, and a damaged file is a one-line error naming it; the
// task commands' FeatureColumns the same, their checksum catching a flipped byte.
#include "data/feature_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/fs.h"
#include "tasks/question_answering/squad_demo_data.h"
#include "test_util.h"

namespace ct::data {
namespace {

using testing::expect_error;
using testing::TempDir;

struct Fixture {
  std::vector<Example> examples;
  text::Tokenizer tok;
  FeatureSet fs;
};

Fixture make(int64_t max_len = 48) {
  DemoOptions o;
  o.seed = 9;
  o.train_paragraphs = 6;
  o.eval_paragraphs = 1;
  auto demo = generate_demo_data(o);
  auto tok = text::Tokenizer::from_vocab(build_demo_vocab(demo.train));
  FeatureOptions fo;
  fo.max_seq_length = max_len;
  fo.doc_stride = 16;
  auto fs = FeatureSet::build(demo.train, tok, fo);
  return {demo.train, std::move(tok), std::move(fs)};
}

TEST(FeatureCache, RoundTripKeepsEveryFeature) {
  TempDir dir;
  auto f = make();
  const std::string path = dir.path() + "/sub/features.bin";
  EXPECT_FALSE(load_feature_set(path).has_value());
  save_feature_set(path, f.fs);
  auto back = load_feature_set(path);
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->size(), f.fs.size());
  EXPECT_EQ(feature_set_hash(*back), feature_set_hash(f.fs));
  for (int64_t i = 0; i < f.fs.size(); ++i) {
    EXPECT_EQ(back->input_ids(i), f.fs.input_ids(i));
    EXPECT_EQ((*back)[i].start_position, f.fs[i].start_position);
    EXPECT_EQ((*back)[i].end_position, f.fs[i].end_position);
    for (int64_t t = 0; t < back->length(i); ++t) EXPECT_EQ(back->offset(i, t), f.fs.offset(i, t));
  }
  EXPECT_EQ(back->options().max_seq_length, 48);
  EXPECT_EQ(back->options().doc_stride, 16);
}

TEST(FeatureCache, HashAndFingerprintSeeChanges) {
  auto a = make(48), b = make(64);
  EXPECT_NE(feature_set_hash(a.fs), feature_set_hash(b.fs));
  auto fewer = make(48);
  fewer.fs.keep_first(fewer.fs.size() - 1);
  EXPECT_NE(feature_set_hash(a.fs), feature_set_hash(fewer.fs));
  EXPECT_EQ(tokenizer_fingerprint(a.tok), tokenizer_fingerprint(b.tok));
  auto vocab = a.tok.vocab();
  vocab.push_back("zzz");
  EXPECT_NE(tokenizer_fingerprint(a.tok), tokenizer_fingerprint(text::Tokenizer::from_vocab(vocab)));
  text::TokenizerOptions cased;
  cased.do_lower_case = false;
  EXPECT_NE(tokenizer_fingerprint(a.tok),
            tokenizer_fingerprint(text::Tokenizer::from_vocab(a.tok.vocab(), cased)));
}

TEST(FeatureCache, DamagedFilesAreNamed) {
  TempDir dir;
  auto f = make();
  const std::string good = dir.path() + "/good.bin";
  save_feature_set(good, f.fs);
  const std::string bytes = fs::read_file(good);
  const auto magic = dir.write("magic.bin", "NOTACACHE" + bytes.substr(9));
  expect_error([&] { load_feature_set(magic); }, {magic, "bad magic"});
  const auto cut = dir.write("cut.bin", bytes.substr(0, bytes.size() / 2));
  expect_error([&] { load_feature_set(cut); }, {cut, "truncated"});
  const auto extra = dir.write("extra.bin", bytes + "xx");
  expect_error([&] { load_feature_set(extra); }, {extra, "trailing"});
}

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
  // A qa file is not a columns file, and the other way round.
  auto f = make();
  const std::string qa = dir.path() + "/qa.bin";
  save_feature_set(qa, f.fs);
  expect_error([&] { load_feature_columns(qa); }, {qa, "bad magic"});
  expect_error([&] { load_feature_set(good); }, {good, "bad magic"});
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

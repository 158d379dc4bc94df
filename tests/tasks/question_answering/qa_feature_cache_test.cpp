// qa's features in the feature cache: a saved set loads back equal (every window, label and offset), the hash
// sees any change, the tokenizer fingerprint follows vocab and options, and a damaged file is a one-line
// error naming it.
#include "tasks/question_answering/qa_feature_cache.h"

#include <gtest/gtest.h>

#include "../../data/test_util.h"
#include "core/fs.h"
#include "data/feature_cache.h"
#include "tasks/question_answering/squad_demo_data.h"

namespace ct::tasks {
namespace {

using data::testing::expect_error;
using data::testing::TempDir;

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
  EXPECT_EQ(data::tokenizer_fingerprint(a.tok), data::tokenizer_fingerprint(b.tok));
  auto vocab = a.tok.vocab();
  vocab.push_back("zzz");
  EXPECT_NE(data::tokenizer_fingerprint(a.tok),
            data::tokenizer_fingerprint(text::Tokenizer::from_vocab(vocab)));
  text::TokenizerOptions cased;
  cased.do_lower_case = false;
  EXPECT_NE(data::tokenizer_fingerprint(a.tok),
            data::tokenizer_fingerprint(text::Tokenizer::from_vocab(a.tok.vocab(), cased)));
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

// A qa file is not a columns file (data/feature_cache.h), and the other way round.
TEST(FeatureCache, QaAndColumnFilesTellEachOtherApart) {
  TempDir dir;
  data::FeatureColumns c;
  c.add("input_ids", {{1, 2, 3}});
  const std::string good = dir.path() + "/columns.bin";
  data::save_feature_columns(good, c);
  auto f = make();
  const std::string qa = dir.path() + "/qa.bin";
  save_feature_set(qa, f.fs);
  expect_error([&] { data::load_feature_columns(qa); }, {qa, "bad magic"});
  expect_error([&] { load_feature_set(good); }, {good, "bad magic"});
}

}  // namespace
}  // namespace ct::tasks

// run_mlm's tokenization (build_mlm_chunks): group_texts over one plain encode per text, the same chunks at
// any thread count, --line_by_line's blank lines dropped, the tokenizer's own settings restored, and a bad
// text named.
#include "tasks/masked_lm/mlm_features.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "tiny_training.h"

namespace ct::tasks {
namespace {

std::vector<std::string> texts() {
  std::vector<std::string> t;
  for (int i = 0; i < 300; ++i) {
    std::string s;
    for (int w = 0; w <= i % 23; ++w) s += (w ? " " : "") + std::string(w % 3 ? "the" : "hello") + ",";
    t.push_back(i % 17 == 0 ? std::string(i % 2 ? "" : " \t") : s);
  }
  return t;
}

TEST(MlmFeatures, GroupsPlainEncodesAndIsTheSameAtAnyThreadCount) {
  text::HfTokenizer tok = test::bert_tokenizer();
  const auto in = texts();
  std::vector<TokenizedText> serial;
  for (const auto& s : in) {
    text::Encoding e = tok.encode(s);
    serial.push_back({e.ids, e.special_tokens_mask});
  }
  const std::vector<TokenChunk> want = group_texts(serial, 16);
  ASSERT_GT(want.size(), 10u);
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    const auto got = build_mlm_chunks(tok, in, false, 16);
    ASSERT_EQ(got.size(), want.size()) << threads << " threads";
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].input_ids, want[i].input_ids) << "chunk " << i << ", " << threads << " threads";
      EXPECT_EQ(got[i].special_tokens_mask, want[i].special_tokens_mask) << "chunk " << i;
    }
  }
  omp_set_num_threads(1);
}

TEST(MlmFeatures, LineByLineDropsBlankLinesAndTruncatesTheRest) {
  text::HfTokenizer tok = test::bert_tokenizer();
  const auto in = texts();
  size_t kept = 0;
  for (const auto& s : in) kept += !(s.empty() || is_python_space(s));
  omp_set_num_threads(2);
  const auto got = build_mlm_chunks(tok, in, true, 8);
  omp_set_num_threads(1);
  ASSERT_EQ(got.size(), kept);
  for (const auto& c : got) EXPECT_LE(c.input_ids.size(), 8u);
  // The call's truncation is gone afterwards: a long text encodes whole again.
  EXPECT_GT(tok.encode(in[22]).size(), 8u);
}

TEST(MlmFeatures, NamesTheTextThatIsNotUtf8) {
  text::HfTokenizer tok = test::bert_tokenizer();
  std::vector<std::string> in{"hello", "the", std::string("bad \xff byte"), "hello"};
  try {
    build_mlm_chunks(tok, in, false, 4);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("text 2: "), std::string::npos) << e.what();
  }
}

TEST(MlmFeatures, PythonIsspace) {
  EXPECT_FALSE(is_python_space(""));
  EXPECT_TRUE(is_python_space(" \t\n\r\x0b\x0c\x1c"));
  EXPECT_TRUE(is_python_space("\xc2\xa0\xe3\x80\x80"));  // NBSP, ideographic space
  EXPECT_FALSE(is_python_space(" a "));
  EXPECT_FALSE(is_python_space("\xe2\x80\x8b"));  // zero-width space is not whitespace to Python
}

}  // namespace
}  // namespace ct::tasks

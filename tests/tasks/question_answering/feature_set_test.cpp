// run_qa features: window counts and positions worked out by hand, HF's overlap stride, labels (inside,
// partly outside -> [CLS], the last-context-token edge case), unicode contexts, padding, and every gold
// answer that lies inside a window decoding back to its text through the offsets.
#include "tasks/question_answering/qa_features.h"

#include <gtest/gtest.h>

#include "../../data/test_util.h"
#include "tasks/question_answering/squad_demo_data.h"

namespace ct::tasks {
namespace {

using data::testing::expect_error;

text::Tokenizer small_tokenizer() {
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "q1",
                                    "q2",    "q3",    "?",     ".",     "cafe",   "uber"};
  for (int i = 0; i < 20; ++i) vocab.push_back(ct::str("w", i));
  return text::Tokenizer::from_vocab(vocab);
}

// "w0 w1 ... w(n-1)": token k starts at byte 3k (for k < 10).
std::string words(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += ct::str(i ? " w" : "w", i);
  return s;
}

Example example(const std::string& context, const std::string& question, const std::string& answer,
                int64_t begin) {
  Example e;
  e.id = "e";
  e.context = context;
  e.question = question;
  if (!answer.empty()) {
    Answer a;
    a.text = answer;
    a.begin = begin;
    a.end = begin + static_cast<int64_t>(answer.size());
    e.answers.push_back(a);
  }
  return e;
}

FeatureOptions opt(int64_t max_len, int64_t stride) {
  FeatureOptions o;
  o.max_seq_length = max_len;
  o.doc_stride = stride;
  return o;
}

std::string decode(const Example& e, const FeatureSet& fs, int64_t f) {
  auto s = fs.offset(f, fs[f].start_position), t = fs.offset(f, fs[f].end_position);
  if (!s || !t) return "<none>";
  return e.context.substr(static_cast<size_t>(s->begin), static_cast<size_t>(t->end - s->begin));
}

TEST(Features, WindowsOverlapByDocStride) {
  const auto tok = small_tokenizer();
  // Question "q1 q2" (2 tokens), max_seq_length 9: budget 9 - 2 - 3 = 4 context tokens per window, overlap 2,
  // so windows start every 2 tokens: [0,4) [2,6) [4,8) [6,10).
  const std::vector<Example> ex = {example(words(10), "q1 q2", "w5 w6", 15)};
  FeatureSet fs = FeatureSet::build(ex, tok, opt(9, 2));
  ASSERT_EQ(fs.size(), 4);
  for (int64_t f = 0; f < 4; ++f) {
    EXPECT_EQ(fs[f].context_begin, 2 * f);
    EXPECT_EQ(fs[f].context_len, 4);
    EXPECT_EQ(fs[f].example_index, 0);
    EXPECT_EQ(fs.length(f), 9);
    EXPECT_EQ(fs.context_start(f), 4);
  }
  // Only window [4,8) holds all of "w5 w6": tokens 5 and 6 sit at sequence positions 4 + 1 and 4 + 2.
  EXPECT_EQ(fs[0].start_position, 0);
  EXPECT_EQ(fs[1].start_position, 0);  // w5 inside, w6 not: [CLS]
  EXPECT_EQ(fs[1].end_position, 0);
  EXPECT_EQ(fs[2].start_position, 5);
  EXPECT_EQ(fs[2].end_position, 6);
  EXPECT_EQ(decode(ex[0], fs, 2), "w5 w6");
  EXPECT_EQ(fs[3].start_position, 0);
  // Sequence layout and offsets of window 2: [CLS] q1 q2 [SEP] w4 w5 w6 w7 [SEP].
  const int32_t q1 = tok.token_to_id("q1"), q2 = tok.token_to_id("q2"), w4 = tok.token_to_id("w4");
  EXPECT_EQ(fs.input_ids(2), (std::vector<int32_t>{tok.cls_id(), q1, q2, tok.sep_id(), w4, w4 + 1, w4 + 2,
                                                   w4 + 3, tok.sep_id()}));
  EXPECT_FALSE(fs.offset(2, 0));
  EXPECT_FALSE(fs.offset(2, 1));
  EXPECT_FALSE(fs.offset(2, 3));
  EXPECT_EQ(*fs.offset(2, 4), (Span{12, 14}));
  EXPECT_FALSE(fs.offset(2, 8));
  EXPECT_FALSE(fs.offset(2, 20));
}

TEST(Features, WindowCountsByHand) {
  const auto tok = small_tokenizer();
  struct Case {
    int ctx, max_len, stride;
    int64_t windows;
  };
  // budget = max_len - 1 (question "q1") - 3; windows = 1 + ceil((ctx - budget) / (budget - stride)).
  for (Case c : {Case{10, 14, 3, 1}, Case{10, 13, 3, 2}, Case{10, 8, 0, 3}, Case{10, 8, 3, 7},
                 Case{20, 9, 4, 16}, Case{11, 9, 2, 3}, Case{0, 5, 0, 1}}) {
    FeatureSet fs = FeatureSet::build({example(words(c.ctx), "q1", "", 0)}, tok, opt(c.max_len, c.stride));
    EXPECT_EQ(fs.size(), c.windows) << c.ctx << " " << c.max_len << " " << c.stride;
    // Windows start every budget - stride tokens, the last one ends at the context's end.
    const int64_t budget = std::min<int64_t>(c.max_len - 4, c.ctx);
    for (int64_t f = 0; f < fs.size(); ++f) {
      EXPECT_LE(fs.length(f), c.max_len);
      if (f + 1 < fs.size()) {
        EXPECT_EQ(fs[f].context_len, budget);
        EXPECT_EQ(fs[f + 1].context_begin - fs[f].context_begin, budget - c.stride);
      } else {
        EXPECT_EQ(fs[f].context_begin + fs[f].context_len, c.ctx);
      }
    }
  }
}

TEST(Features, AnswerAtTheWindowsLastContextToken) {
  const auto tok = small_tokenizer();
  // Window [0,4) ends with "w3"; HF's advancing loop would run into [SEP]/padding, we stop at w3.
  const std::vector<Example> ex = {example(words(10), "q1 q2", "w3", 9)};
  FeatureSet fs = FeatureSet::build(ex, tok, opt(9, 2));
  EXPECT_EQ(fs[0].start_position, 7);
  EXPECT_EQ(fs[0].end_position, 7);
  EXPECT_EQ(decode(ex[0], fs, 0), "w3");
  // The next window holds w3 at its second position.
  EXPECT_EQ(fs[1].start_position, 5);
  EXPECT_EQ(decode(ex[0], fs, 1), "w3");
}

TEST(Features, AnswerInsideATokenMapsToThatToken) {
  const auto tok = small_tokenizer();
  // Answer "1" is the second character of token "w1": the label spans the whole token, as HF.
  const std::vector<Example> ex = {example(words(4), "q1", "1", 4)};
  FeatureSet fs = FeatureSet::build(ex, tok, opt(32, 4));
  ASSERT_EQ(fs.size(), 1);
  EXPECT_EQ(fs[0].start_position, 4);
  EXPECT_EQ(fs[0].end_position, 4);
}

TEST(Features, NoAnswerLabelsCls) {
  const auto tok = small_tokenizer();
  FeatureSet fs = FeatureSet::build({example(words(6), "q1", "", 0)}, tok, opt(32, 4));
  EXPECT_EQ(fs[0].start_position, 0);
  EXPECT_EQ(fs[0].end_position, 0);
}

TEST(Features, UnicodeContextByteOffsets) {
  const auto tok = small_tokenizer();
  // "café über w1": accents are stripped by the tokenizer but offsets point into the original bytes.
  const std::string ctx =
      "caf\xC3\xA9 \xC3\xBC"
      "ber w1";
  const std::vector<Example> ex = {example(ctx, "q1",
                                           "\xC3\xBC"
                                           "ber",
                                           6)};
  FeatureSet fs = FeatureSet::build(ex, tok, opt(32, 4));
  ASSERT_EQ(fs.size(), 1);
  EXPECT_EQ(fs[0].start_position, 4);
  EXPECT_EQ(fs[0].end_position, 4);
  EXPECT_EQ(decode(ex[0], fs, 0),
            "\xC3\xBC"
            "ber");
  EXPECT_EQ(*fs.offset(0, 3), (Span{0, 5}));
  EXPECT_EQ(fs.input_ids(0)[3], tok.token_to_id("cafe"));
}

TEST(Features, QuestionIsLeftStripped) {
  EXPECT_EQ(lstrip_unicode(" \t\xC2\xA0\xE3\x80\x80q1 "), "q1 ");
  EXPECT_EQ(lstrip_unicode(""), "");
  const auto tok = small_tokenizer();
  FeatureSet a = FeatureSet::build({example(words(5), "   q1 q2", "", 0)}, tok, opt(16, 2));
  FeatureSet b = FeatureSet::build({example(words(5), "q1 q2", "", 0)}, tok, opt(16, 2));
  EXPECT_EQ(a.input_ids(0), b.input_ids(0));
}

TEST(Features, CollatePadsToMaxOrDynamically) {
  const auto tok = small_tokenizer();
  std::vector<Example> ex = {example(words(3), "q1", "w1", 3), example(words(6), "q1 q2 q3", "w5", 15)};
  FeatureSet fs = FeatureSet::build(ex, tok, opt(16, 4));
  ASSERT_EQ(fs.size(), 2);
  std::vector<int64_t> idx = {1, 0};
  Batch b = fs.collate(idx);
  EXPECT_EQ(b.batch_size, 2);
  EXPECT_EQ(b.seq_len, 16);
  // Row 0 = feature 1: [CLS] q1 q2 q3 [SEP] w0..w5 [SEP] = 12 tokens, type 1 from position 5 to 11.
  for (int k = 0; k < 16; ++k) {
    EXPECT_EQ(b.attention_mask[static_cast<size_t>(k)], k < 12 ? 1 : 0) << k;
    EXPECT_EQ(b.token_type_ids[static_cast<size_t>(k)], k >= 5 && k < 12 ? 1 : 0) << k;
    if (k >= 12) {
      EXPECT_EQ(b.input_ids[static_cast<size_t>(k)], tok.pad_id());
    }
  }
  EXPECT_EQ(b.input_ids[11], tok.sep_id());
  EXPECT_EQ(b.start_positions, (std::vector<int64_t>{10, 4}));
  EXPECT_EQ(b.end_positions, (std::vector<int64_t>{10, 4}));
  EXPECT_EQ(b.feature_indices, idx);
  // Row 1 = feature 0: 7 tokens.
  EXPECT_EQ(b.attention_mask[16 + 6], 1);
  EXPECT_EQ(b.attention_mask[16 + 7], 0);

  FeatureOptions dyn = opt(16, 4);
  dyn.pad_to_max_length = false;
  FeatureSet d = FeatureSet::build(ex, tok, dyn);
  EXPECT_EQ(d.collate(idx).seq_len, 12);
  std::vector<int64_t> only0 = {0};
  EXPECT_EQ(d.collate(only0).seq_len, 7);
  dyn.pad_to_multiple_of = 8;
  EXPECT_EQ(FeatureSet::build(ex, tok, dyn).collate(idx).seq_len, 16);
  EXPECT_EQ(FeatureSet::build(ex, tok, dyn).collate(only0).seq_len, 8);
}

TEST(Features, CollatePackedLaysRowsEndToEndWithoutPadding) {
  const auto tok = small_tokenizer();
  std::vector<Example> ex = {example(words(3), "q1", "w1", 3), example(words(6), "q1 q2 q3", "w5", 15)};
  FeatureOptions dyn = opt(16, 4);
  dyn.pad_to_max_length = false;
  FeatureSet fs = FeatureSet::build(ex, tok, dyn);
  std::vector<int64_t> idx = {1, 0};
  const Batch padded = fs.collate(idx);
  const Batch p = fs.collate_packed(idx);
  EXPECT_EQ(p.batch_size, 2);
  EXPECT_EQ(p.seq_len, 16);  // max_seq_length, whatever the rows (keys dropout counters)
  EXPECT_EQ(p.lengths, (std::vector<int32_t>{12, 7}));
  EXPECT_TRUE(p.attention_mask.empty());
  ASSERT_EQ(p.input_ids.size(), 19u);
  // Every real token of the padded batch, in order, and nothing else.
  std::vector<int32_t> ids, types;
  for (int64_t r = 0; r < padded.batch_size; ++r)
    for (int64_t k = 0; k < padded.seq_len; ++k)
      if (padded.attention_mask[static_cast<size_t>(r * padded.seq_len + k)]) {
        ids.push_back(padded.input_ids[static_cast<size_t>(r * padded.seq_len + k)]);
        types.push_back(padded.token_type_ids[static_cast<size_t>(r * padded.seq_len + k)]);
      }
  EXPECT_EQ(p.input_ids, ids);
  EXPECT_EQ(p.token_type_ids, types);
  EXPECT_EQ(p.start_positions, padded.start_positions);
  EXPECT_EQ(p.end_positions, padded.end_positions);
  EXPECT_EQ(p.feature_indices, idx);
  std::vector<int64_t> only0 = {0};
  EXPECT_EQ(fs.collate_packed(only0).seq_len, 16);
}

TEST(Features, KeepFirstAfterCreation) {
  const auto tok = small_tokenizer();
  FeatureSet fs = FeatureSet::build({example(words(10), "q1 q2", "", 0)}, tok, opt(9, 2));
  ASSERT_EQ(fs.size(), 4);
  fs.keep_first(3);
  EXPECT_EQ(fs.size(), 3);
  fs.keep_first(-1);
  EXPECT_EQ(fs.size(), 3);
}

TEST(Features, ShortContextIsNotTruncatedEvenWithALongQuestion) {
  const auto tok = small_tokenizer();
  // 8 question tokens + 1 context token + 3 = 12 fits max_seq_length 12: one feature, no stride check.
  FeatureSet fs = FeatureSet::build({example("w0", "q1 q1 q1 q1 q1 q1 q1 q1", "w0", 0)}, tok, opt(12, 10));
  ASSERT_EQ(fs.size(), 1);
  EXPECT_EQ(fs[0].start_position, 10);
}

TEST(Features, BadSettings) {
  const auto tok = small_tokenizer();
  Example e = example(words(10), "q1 q2 q3 q1 q2", "", 0);
  e.id = "long-q";
  // 5 question tokens + 3 specials leave nothing of max_seq_length 8 for the context.
  expect_error([&] { FeatureSet::build({e}, tok, opt(8, 0)); },
               {"--max_seq_length 8", "long-q", "5 tokens", "need max_seq_length > 8"});
  // Budget 12 - 5 - 3 = 4 context tokens; an overlap of 4 never advances.
  expect_error([&] { FeatureSet::build({e}, tok, opt(12, 4)); }, {"--doc_stride 4", "long-q", "= 4 tokens"});
  expect_error([&] { FeatureSet::build({e}, tok, opt(0, 0)); }, {"--max_seq_length must be positive"});
  expect_error([&] { FeatureSet::build({e}, tok, opt(16, -1)); }, {"--doc_stride must be >= 0"});
}

TEST(Features, ClampsToModelMaxLength) {
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "w0", "w1", "w2", "w3", "w4", "w5"};
  text::TokenizerOptions to;
  to.model_max_length = 6;
  const auto tok = text::Tokenizer::from_vocab(vocab, to);
  FeatureSet fs = FeatureSet::build({example(words(6), "w0", "", 0)}, tok, opt(384, 0));
  EXPECT_EQ(fs.options().max_seq_length, 6);
  EXPECT_EQ(fs.size(), 3);  // budget 2, step 2
}

TEST(Features, EveryGoldAnswerInAWindowDecodesToItsText) {
  DemoOptions o;
  o.seed = 5;
  o.train_paragraphs = 60;
  o.eval_paragraphs = 5;
  DemoData d = generate_demo_data(o);
  const auto tok = text::Tokenizer::from_vocab(build_demo_vocab(d.train));
  // Short windows so most paragraphs are cut into several overlapping features.
  FeatureSet fs = FeatureSet::build(d.train, tok, opt(32, 8));
  EXPECT_GT(fs.size(), static_cast<int64_t>(d.train.size()) * 3 / 2);
  std::vector<int> found(d.train.size(), 0);
  for (int64_t f = 0; f < fs.size(); ++f) {
    const Example& e = d.train[static_cast<size_t>(fs[f].example_index)];
    for (int32_t id : fs.input_ids(f)) EXPECT_NE(id, tok.unk_id());
    if (fs[f].start_position == 0) continue;
    EXPECT_LE(fs[f].start_position, fs[f].end_position);
    EXPECT_EQ(decode(e, fs, f), e.answers[0].text) << e.id;
    ++found[static_cast<size_t>(fs[f].example_index)];
  }
  // Demo answers are at most 3 tokens long and windows overlap by 8, so every answer lies inside some window.
  for (size_t i = 0; i < found.size(); ++i) EXPECT_GT(found[i], 0) << d.train[i].id;
}

}  // namespace
}  // namespace ct::tasks

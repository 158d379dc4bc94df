// Tokenizer behaviour against hand-worked expectations on small vocabs (HF is not installed here); each case
// says which behaviour of HF's fast BertTokenizer (tokenizers' BertNormalizer, BertPreTokenizer, WordPiece)
// it pins.
#include "text/tokenizer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"

namespace ct::text {
namespace {

// Ids 0..4 are [PAD] [UNK] [CLS] [SEP] [MASK]; `tokens` follow from id 5.
Tokenizer make(std::vector<std::string> tokens, TokenizerOptions options = {}) {
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  vocab.insert(vocab.end(), tokens.begin(), tokens.end());
  return Tokenizer::from_vocab(std::move(vocab), std::move(options));
}

TokenizerOptions cased() {
  TokenizerOptions o;
  o.do_lower_case = false;
  return o;
}

// Token strings and their original surfaces (text[begin, end)), checking the offsets are sane on the way.
struct Encoded {
  std::vector<std::string> tokens;
  std::vector<std::string> surfaces;
  std::vector<std::pair<int, int>> spans;
};

Encoded run(const Tokenizer& t, std::string_view text) {
  Encoded e;
  int last_begin = 0;
  for (const Token& tok : t.encode(text)) {
    EXPECT_GE(tok.id, 0);
    EXPECT_LT(tok.id, t.vocab_size());
    EXPECT_LE(0, tok.begin);
    EXPECT_LT(tok.begin, tok.end);
    EXPECT_LE(tok.end, static_cast<int>(text.size()));
    EXPECT_LE(last_begin, tok.begin);
    last_begin = tok.begin;
    e.tokens.push_back(t.vocab()[tok.id]);
    e.surfaces.emplace_back(text.substr(tok.begin, tok.end - tok.begin));
    e.spans.emplace_back(tok.begin, tok.end);
  }
  return e;
}

using Strings = std::vector<std::string>;
using Spans = std::vector<std::pair<int, int>>;

TEST(Tokenizer, SpecialIds) {
  auto t = make({"hello"});
  EXPECT_EQ(t.pad_id(), 0);
  EXPECT_EQ(t.unk_id(), 1);
  EXPECT_EQ(t.cls_id(), 2);
  EXPECT_EQ(t.sep_id(), 3);
  EXPECT_EQ(t.mask_id(), 4);
  EXPECT_EQ(t.token_to_id("hello"), 5);
  EXPECT_EQ(t.token_to_id("absent"), -1);
  EXPECT_EQ(t.vocab_size(), 6);
  EXPECT_TRUE(t.encode("").empty());
  EXPECT_TRUE(t.encode(" \t\n ").empty());
}

// BertPreTokenizer: whitespace removed, each ASCII punctuation char isolated; lower-case maps offsets to
// originals.
TEST(Tokenizer, LowerCaseAndAsciiPunctuation) {
  auto t = make({"hello", "world", ",", "!", "a", "+", "b", "$", "5", "'", "s", "it"});
  auto e = run(t, "Hello, World!");
  EXPECT_EQ(e.tokens, (Strings{"hello", ",", "world", "!"}));
  EXPECT_EQ(e.surfaces, (Strings{"Hello", ",", "World", "!"}));
  EXPECT_EQ(e.spans, (Spans{{0, 5}, {5, 6}, {7, 12}, {12, 13}}));
  // ASCII symbols ($ + ') count as punctuation (char::is_ascii_punctuation), so they split words.
  EXPECT_EQ(run(t, "a+b $5 it's").tokens, (Strings{"a", "+", "b", "$", "5", "it", "'", "s"}));
}

// Greedy longest-match-first with "##" continuation; sub-token offsets are their own spans inside the word.
TEST(Tokenizer, WordPieceContinuation) {
  auto t = make({"un", "##a", "##aff", "##able", "##ff", "hello"});
  auto e = run(t, "unaffable");
  EXPECT_EQ(e.tokens, (Strings{"un", "##aff", "##able"}));
  EXPECT_EQ(e.spans, (Spans{{0, 2}, {2, 5}, {5, 9}}));
  EXPECT_EQ(e.surfaces, (Strings{"un", "aff", "able"}));
  // A word-initial piece is never looked up with "##", a continuation never without it.
  EXPECT_EQ(run(t, "aff").tokens, (Strings{"[UNK]"}));
}

// WordPiece: one unmatchable piece turns the whole word into a single [UNK] spanning the word.
TEST(Tokenizer, UnknownPieceMakesWholeWordUnk) {
  auto t = make({"un", "##aff", "##able", "hello", "world"});
  auto e = run(t, "hello unaffablex world");
  EXPECT_EQ(e.tokens, (Strings{"hello", "[UNK]", "world"}));
  EXPECT_EQ(e.surfaces, (Strings{"hello", "unaffablex", "world"}));
  EXPECT_EQ(run(t, "xyz").surfaces, (Strings{"xyz"}));
}

// max_input_chars_per_word counts characters (not bytes); more than the limit -> one [UNK] for the word.
TEST(Tokenizer, LongWords) {
  TokenizerOptions o;
  o.max_input_chars_per_word = 5;
  auto t = make({"a", "##a", "hi"}, o);
  EXPECT_EQ(run(t, "aaaaa").tokens, (Strings{"a", "##a", "##a", "##a", "##a"}));
  auto e = run(t, "hi aaaaaa hi");
  EXPECT_EQ(e.tokens, (Strings{"hi", "[UNK]", "hi"}));
  EXPECT_EQ(e.spans, (Spans{{0, 2}, {3, 9}, {10, 12}}));

  auto c = cased();
  c.max_input_chars_per_word = 5;
  auto u = make({"é", "##é"}, c);
  EXPECT_EQ(run(u, "ééééé").tokens.size(), 5u);  // 10 bytes, 5 chars: allowed
  EXPECT_EQ(run(u, "éééééé").tokens, (Strings{"[UNK]"}));

  // Default limit 100: exactly 100 is tokenized, 101 is [UNK].
  auto d = make({"a", "##a"});
  EXPECT_EQ(run(d, std::string(100, 'a')).tokens.size(), 100u);
  EXPECT_EQ(run(d, std::string(101, 'a')).tokens, (Strings{"[UNK]"}));
}

// strip_accents unset follows lowercase: NFD then drop Mn. A precomposed é maps back to both of its bytes.
TEST(Tokenizer, AccentsStrippedWhenUncased) {
  auto t = make({"cafe", "nandu", "ca", "##fe", "resume"});
  auto e = run(t, "Café Ñandú");
  EXPECT_EQ(e.tokens, (Strings{"cafe", "nandu"}));
  EXPECT_EQ(e.spans, (Spans{{0, 5}, {6, 13}}));
  EXPECT_EQ(e.surfaces, (Strings{"Café", "Ñandú"}));
  // Already-decomposed input: the dropped U+0301 keeps its own span, so it falls outside the token
  // (HF's filter() keeps each kept char's own alignment).
  const std::string decomposed = "Cafe\xCC\x81";
  e = run(t, decomposed);
  EXPECT_EQ(e.tokens, (Strings{"cafe"}));
  EXPECT_EQ(e.spans, (Spans{{0, 4}}));
  // A lone combining mark between spaces vanishes entirely.
  EXPECT_TRUE(run(t, " \xCC\x81 ").tokens.empty());
}

TEST(Tokenizer, StripAccentsOptions) {
  // Uncased but strip_accents=false: lower-case keeps the accent.
  TokenizerOptions keep;
  keep.strip_accents = 0;
  auto t = make({"café", "cafe"}, keep);
  auto e = run(t, "CAFÉ");
  EXPECT_EQ(e.tokens, (Strings{"café"}));
  EXPECT_EQ(e.spans, (Spans{{0, 5}}));
  // Cased with strip_accents unset: nothing is stripped or lowered.
  auto c = make({"Café", "cafe", "Cafe"}, cased());
  EXPECT_EQ(run(c, "Café").tokens, (Strings{"Café"}));
  // Cased with strip_accents=true: stripped but not lowered.
  auto cs = cased();
  cs.strip_accents = 1;
  auto s = make({"Café", "cafe", "Cafe"}, cs);
  EXPECT_EQ(run(s, "Café").tokens, (Strings{"Cafe"}));
  EXPECT_TRUE(s.strips_accents());
  EXPECT_FALSE(c.strips_accents());
  EXPECT_TRUE(make({}).strips_accents());
}

// The fast tokenizer strips accents BEFORE lower-casing. U+0130 (İ): NFD gives I + U+0307, the mark is
// dropped, then "I" lowers to "i". Without stripping, Rust's to_lowercase expands İ to "i" + U+0307 and both
// pieces carry İ's span (the expansion also counts toward max_input_chars_per_word).
TEST(Tokenizer, TurkishDottedCapitalI) {
  auto t = make({"istanbul"});
  auto e = run(t, "İstanbul");
  EXPECT_EQ(e.tokens, (Strings{"istanbul"}));
  EXPECT_EQ(e.spans, (Spans{{0, 9}}));

  TokenizerOptions keep;
  keep.strip_accents = 0;
  auto k = make({"i", "##\xCC\x87", "##stanbul"}, keep);
  e = run(k, "İstanbul");
  EXPECT_EQ(e.tokens, (Strings{"i", "##\xCC\x87", "##stanbul"}));
  EXPECT_EQ(e.spans, (Spans{{0, 2}, {0, 2}, {2, 9}}));
  keep.max_input_chars_per_word = 8;  // 8 original chars, 9 after lower-casing
  auto k8 = make({"i", "##\xCC\x87", "##stanbul"}, keep);
  EXPECT_EQ(run(k8, "İstanbul").tokens, (Strings{"[UNK]"}));
}

// handle_chinese_chars pads CJK ideographs so each is its own word; offsets stay on the original 3-byte
// chars.
TEST(Tokenizer, ChineseCharacters) {
  auto t = make({"中", "文", "abc", "カタカナ", "\xE8\xB1\x88"});
  auto e = run(t, "中文abc");
  EXPECT_EQ(e.tokens, (Strings{"中", "文", "abc"}));
  EXPECT_EQ(e.spans, (Spans{{0, 3}, {3, 6}, {6, 9}}));
  // Kana is not in the padded blocks: one word.
  EXPECT_EQ(run(t, "カタカナ").tokens, (Strings{"カタカナ"}));
  // U+F900 (CJK compatibility block) is padded, then NFD maps it to U+8C48: padding happens before stripping.
  e = run(t, "\xEF\xA4\x80");
  EXPECT_EQ(e.tokens, (Strings{"\xE8\xB1\x88"}));
  EXPECT_EQ(e.spans, (Spans{{0, 3}}));
  // With tokenize_chinese_chars=false the ideographs stay inside the word.
  TokenizerOptions o;
  o.tokenize_chinese_chars = false;
  auto n = make({"中文abc", "中", "文"}, o);
  EXPECT_EQ(run(n, "中文abc").tokens, (Strings{"中文abc"}));
}

// Hangul is not padded, and stripping accents runs NFD, which decomposes syllables into jamo (Lo, kept):
// uncased BERT sees jamo. Cased (no stripping) keeps the syllables.
TEST(Tokenizer, HangulDecomposedOnlyWhenStripping) {
  const std::string syllables = "한국어";
  const std::string jamo =
      "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB"  // U+1112 U+1161 U+11AB
      "\xE1\x84\x80\xE1\x85\xAE\xE1\x86\xA8"  // U+1100 U+116E U+11A8
      "\xE1\x84\x8B\xE1\x85\xA5";             // U+110B U+1165
  auto u = make({syllables, jamo});
  auto e = run(u, syllables);
  EXPECT_EQ(e.tokens, (Strings{jamo}));
  EXPECT_EQ(e.spans, (Spans{{0, 9}}));
  auto c = make({syllables, jamo}, cased());
  EXPECT_EQ(run(c, syllables).tokens, (Strings{syllables}));
}

// Unicode P* is punctuation (isolated); symbols outside ASCII (Sc, So) are not.
TEST(Tokenizer, UnicodePunctuation) {
  auto t = make({"“", "”", "—", "¿", "hello", "world", "que", "5", "##€", "«", "»"});
  auto e = run(t, "“Hello”—world ¿que «5€»");
  EXPECT_EQ(e.tokens, (Strings{"“", "hello", "”", "—", "world", "¿", "que", "«", "5", "##€", "»"}));
  EXPECT_EQ(e.surfaces, (Strings{"“", "Hello", "”", "—", "world", "¿", "que", "«", "5", "€", "»"}));
}

// clean_text drops NUL, U+FFFD and Cc/Cf/Co/Cn (except \t\n\r) BEFORE mapping whitespace, so \v, \f and
// U+0085 (Cc) vanish and join their neighbours; U+200B, U+00AD, U+FEFF (Cf) vanish too. The word keeps the
// span of all its kept chars, so a dropped char inside it is covered.
TEST(Tokenizer, ControlAndZeroWidthDropped) {
  auto t = make({"hello", "ab", "a", "b"});
  auto e = run(t, "hel\u200Blo");
  EXPECT_EQ(e.tokens, (Strings{"hello"}));
  EXPECT_EQ(e.spans, (Spans{{0, 8}}));
  EXPECT_EQ(run(t,
                "\xC2\xAD"
                "hello\xEF\xBB\xBF")
                .tokens,
            (Strings{"hello"}));
  EXPECT_EQ(run(t,
                "\xC2\xAD"
                "hello")
                .spans,
            (Spans{{2, 7}}));
  EXPECT_EQ(run(t,
                "a\x01"
                "b")
                .tokens,
            (Strings{"ab"}));
  EXPECT_EQ(run(t, std::string_view("a\0b", 3)).tokens, (Strings{"ab"}));
  EXPECT_EQ(run(t, "a\vb").tokens, (Strings{"ab"}));
  EXPECT_EQ(run(t, "a\fb").tokens, (Strings{"ab"}));
  EXPECT_EQ(run(t,
                "a\xC2\x85"
                "b")
                .tokens,
            (Strings{"ab"}));
  EXPECT_EQ(run(t,
                "a\x7F"
                "b")
                .tokens,
            (Strings{"ab"}));
  EXPECT_EQ(run(t,
                "a\xEF\xBF\xBD"
                "b")
                .tokens,
            (Strings{"ab"}));  // U+FFFD
  EXPECT_EQ(run(t,
                "a\xEE\x80\x80"
                "b")
                .tokens,
            (Strings{"ab"}));  // U+E000, Co
  // Malformed UTF-8 bytes are read as U+FFFD, hence dropped; offsets stay on the original bytes.
  e = run(t,
          "a\xFF"
          "b \xE2\x82");
  EXPECT_EQ(e.tokens, (Strings{"ab"}));
  EXPECT_EQ(e.spans, (Spans{{0, 3}}));
  // Unassigned code points (Cn) are kept: verified against HF tokenizers 0.23, which keeps U+0378.
  auto cn = make({"a", "##\xCD\xB8", "##b"});
  EXPECT_EQ(run(cn,
                "a\xCD\xB8"
                "b")
                .tokens,
            (Strings{"a", "##\xCD\xB8", "##b"}));
  // Without clean_text, \v is still whitespace for the pre-tokenizer and other controls stay in the word.
  TokenizerOptions raw;
  raw.clean_text = false;
  auto r = make({"a", "b",
                 "a\x01"
                 "b"},
                raw);
  EXPECT_EQ(run(r, "a\vb").tokens, (Strings{"a", "b"}));
  EXPECT_EQ(run(r,
                "a\x01"
                "b")
                .tokens,
            (Strings{"a\x01"
                     "b"}));
}

// NFD reorders a run of combining characters by class; HF's alignment is positional, so after the reorder the
// last character of "x U+1D16D(ccc 226) U+1D165(ccc 216)" carries the last ORIGINAL position's span (verified
// against HF tokenizers 0.23: the [UNK] spans the whole word).
TEST(Tokenizer, CanonicalReorderKeepsPositionalSpans) {
  auto t = make({"x"});
  auto e = run(t, "x\xF0\x9D\x85\xAD\xF0\x9D\x85\xA5");
  EXPECT_EQ(e.tokens, (Strings{"[UNK]"}));
  EXPECT_EQ(e.spans, (Spans{{0, 9}}));
  // An inserted piece (the U+0301 of é) sorts after U+1D165 (ccc 216); the consumed character U+1D165 keeps
  // its own span (verified against HF tokenizers 0.23).
  auto m = make({"resume", "##\xF0\x9D\x85\xA5"});
  e = run(m, "r\xC3\xA9sum\xC3\xA9\xF0\x9D\x85\xA5");
  EXPECT_EQ(e.tokens, (Strings{"resume", "##\xF0\x9D\x85\xA5"}));
  EXPECT_EQ(e.spans, (Spans{{0, 8}, {8, 12}}));
  // Both marks survive stripping (they are Mc, not Mn), in canonical order.
  auto r = make({"x", "##\xF0\x9D\x85\xA5\xF0\x9D\x85\xAD"});
  EXPECT_EQ(run(r, "x\xF0\x9D\x85\xAD\xF0\x9D\x85\xA5").tokens.size(), 2u);
}

// Whitespace: \t \n \r, NBSP, U+1680, U+2000..U+200A, U+2028/2029, U+202F, U+205F, U+3000 all split words.
TEST(Tokenizer, Whitespace) {
  auto t = make({"a", "b", "c", "d"});
  EXPECT_EQ(run(t, "a\tb\nc\rd").tokens, (Strings{"a", "b", "c", "d"}));
  for (const char* ws : {"\xC2\xA0", "\xE1\x9A\x80", "\xE2\x80\x80", "\xE2\x80\x8A", "\xE2\x80\xA8",
                         "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE2\x81\x9F", "\xE3\x80\x80"}) {
    auto e = run(t, std::string("a") + ws + "b");
    EXPECT_EQ(e.tokens, (Strings{"a", "b"})) << "separator bytes " << ws;
    EXPECT_EQ(e.spans.back().first, static_cast<int>(1 + std::string(ws).size()));
  }
  // U+180E (Mongolian vowel separator) is Cf since Unicode 6.3, not whitespace: dropped, words join.
  EXPECT_EQ(run(make({"ab"}),
                "a\xE1\xA0\x8E"
                "b")
                .tokens,
            (Strings{"ab"}));
}

// Special tokens are HF added tokens: matched verbatim in the raw text before normalization,
// case-sensitively.
TEST(Tokenizer, SpecialTokensInText) {
  auto t = make({"hello", "world", "[", "]", "sep"});
  auto e = run(t, "Hello [SEP] world[MASK][MASK]");
  EXPECT_EQ(e.tokens, (Strings{"hello", "[SEP]", "world", "[MASK]", "[MASK]"}));
  EXPECT_EQ(e.spans, (Spans{{0, 5}, {6, 11}, {12, 17}, {17, 23}, {23, 29}}));
  EXPECT_EQ(run(t, "[sep]").tokens, (Strings{"[", "sep", "]"}));
  EXPECT_EQ(run(t, "[SE").tokens, (Strings{"[", "[UNK]"}));
}

// Offsets over a mixed text: every token's surface is the original text it came from.
TEST(Tokenizer, OffsetsOverMixedText) {
  auto t = make({"the", "cafe", "in", "zurich", "opened", "in", "1905", ".", "“", "”", "北", "京", "is",
                 "big", "!", "re", "##sume", "naive", "x"});
  const std::string text = "  The “Café” in Zürich\topened in 1905.\n北京 is BIG! Résumé naïve ... x";
  auto e = run(t, text);
  const Strings expected_surfaces = {"The",  "“",     "Café", "”",  "in", "Zürich", "opened", "in",
                                     "1905", ".",     "北",   "京", "is", "BIG",    "!",      "Ré",
                                     "sumé", "naïve", ".",    ".",  ".",  "x"};
  EXPECT_EQ(e.surfaces, expected_surfaces);
  EXPECT_EQ(e.tokens[15], "re");
  EXPECT_EQ(e.tokens[16], "##sume");
}

// Arbitrary bytes (malformed UTF-8 included) never break the offset invariants checked by run(), and on valid
// UTF-8 every token starts and ends on a character boundary.
TEST(Tokenizer, RandomBytesKeepOffsetsSane) {
  auto t = make({"a", "##a", "é", "##é", "中", "[", "]"});
  std::mt19937 rng(3);
  const std::vector<std::string> pieces = {
      "a",     "A", "é", "É", "e\xCC\x81", "中",       " ",    "\t",          "\xC2\xA0", "\xE2\x80\x8B",
      "[SEP]", "[", "!", "İ", "\xFF",      "\xE4\xB8", "\x00", "\xEF\xBF\xBD"};
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    bool valid = true;
    const int n = static_cast<int>(rng() % 30);
    for (int k = 0; k < n; ++k) {
      const size_t p = rng() % pieces.size();
      text += p == 16 ? std::string(1, '\0') : pieces[p];
      valid = valid && p != 14 && p != 15;
    }
    const auto e = run(t, text);
    if (!valid) continue;
    for (const auto& [b, end] : e.spans) {
      EXPECT_NE(static_cast<unsigned char>(text[b]) & 0xC0, 0x80) << trial;
      if (end < static_cast<int>(text.size())) {
        EXPECT_NE(static_cast<unsigned char>(text[end]) & 0xC0, 0x80) << trial;
      }
    }
  }
}

TEST(Tokenizer, EncodeIsThreadSafe) {
  auto t = make({"hello", "world"});
  std::vector<size_t> counts(4);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < 200; ++i) counts[k] += t.encode("hello world Hello [CLS] WORLD").size();
    });
  }
  for (auto& th : threads) th.join();
  for (size_t c : counts) EXPECT_EQ(c, 200u * 5);
}

TEST(Tokenizer, FromVocabRejectsBadInput) {
  EXPECT_THROW(Tokenizer::from_vocab({"[PAD]", "[UNK]", "[SEP]"}), Error);
  try {
    Tokenizer::from_vocab({"[PAD]", "[UNK]", "[SEP]"});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cls_token '[CLS]'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Tokenizer::from_vocab({}), Error);
  TokenizerOptions o;
  o.max_input_chars_per_word = 0;
  EXPECT_THROW(make({}, o), Error);
  o = {};
  o.strip_accents = 2;
  EXPECT_THROW(make({}, o), Error);
  EXPECT_THROW(make({"bad\xFF"}), Error);
}

}  // namespace
}  // namespace ct::text

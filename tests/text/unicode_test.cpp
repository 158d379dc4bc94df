// UTF-8 decoding and the character classes the tokenizer borrows from Rust / HF.
#include "text/unicode.h"

#include <gtest/gtest.h>

#include <initializer_list>

namespace ct::text {
namespace {

using L = std::initializer_list<char32_t>;

char32_t dec(std::string_view s, size_t& len) {
  return decode_utf8(s.data(), s.size(), len);
}

TEST(Unicode, DecodeUtf8) {
  size_t len = 0;
  EXPECT_EQ(dec("a", len), U'a');
  EXPECT_EQ(len, 1u);
  EXPECT_EQ(dec("\xC3\xA9", len), 0xE9u);
  EXPECT_EQ(len, 2u);
  EXPECT_EQ(dec("\xE4\xB8\xAD", len), 0x4E2Du);
  EXPECT_EQ(len, 3u);
  EXPECT_EQ(dec("\xF0\x9F\x98\x80", len), 0x1F600u);
  EXPECT_EQ(len, 4u);
  // Malformed: each yields U+FFFD consuming one byte.
  for (std::string_view bad :
       {"\x80", "\xC0\xAF", "\xC3", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xFF", "\xE4\xB8"}) {
    EXPECT_EQ(dec(bad, len), kReplacementChar) << bad;
    EXPECT_EQ(len, 1u);
  }
  std::string out;
  for (char32_t c : L{U'a', char32_t{0xE9}, char32_t{0x4E2D}, char32_t{0x1F600}}) append_utf8(out, c);
  EXPECT_EQ(out, "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80");
}

TEST(Unicode, Classes) {
  // Rust char::is_whitespace: White_Space, which excludes U+200B and U+180E and includes U+0085.
  for (char32_t c : L{0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x200A, 0x2028, 0x2029,
                      0x202F, 0x205F, 0x3000}) {
    EXPECT_TRUE(is_whitespace(c)) << std::hex << static_cast<uint32_t>(c);
  }
  for (char32_t c : L{0x200B, 0x180E, 0x1C, 0xFEFF, 'a'})
    EXPECT_FALSE(is_whitespace(c)) << std::hex << static_cast<uint32_t>(c);
  for (char32_t c : L{0x00, 0x7F, 0x85, 0xAD, 0x200B, 0xFEFF, 0xE000, 0xF0000})
    EXPECT_TRUE(is_other(c)) << std::hex << static_cast<uint32_t>(c);
  // Unassigned (Cn) code points are not dropped by HF's clean_text.
  for (char32_t c : L{U'a', U' ', char32_t{0x4E2D}, char32_t{0x378}, char32_t{0xFFFF}, char32_t{0x10FFFF}}) {
    EXPECT_FALSE(is_other(c)) << std::hex << static_cast<uint32_t>(c);
  }
  for (char32_t c : L{U'!', U'$', U'+', U'^', U'`', U'~', char32_t{0x201C}, char32_t{0x2014}, char32_t{0xBF},
                      char32_t{0x3002}}) {
    EXPECT_TRUE(is_bert_punctuation(c)) << std::hex << static_cast<uint32_t>(c);
  }
  for (char32_t c : L{U'a', U'0', char32_t{0x20AC}, char32_t{0xA9}}) {
    EXPECT_FALSE(is_bert_punctuation(c)) << std::hex << static_cast<uint32_t>(c);
  }
  for (char32_t c : L{0x4E00, 0x9FFF, 0x3400, 0x20000, 0x2B920, 0xF900, 0x2F800}) {
    EXPECT_TRUE(is_chinese_char(c)) << std::hex << static_cast<uint32_t>(c);
  }
  // Kana, Hangul and U+3000 are not padded; nor is 2B820..2B91F, which HF's (BERT's) list skips.
  for (char32_t c : L{0x3042, 0x30A2, 0xAC00, 0x2B820, 0x3000}) {
    EXPECT_FALSE(is_chinese_char(c)) << std::hex << static_cast<uint32_t>(c);
  }
  EXPECT_TRUE(is_nonspacing_mark(0x301));
  // HF's category tables stop at Unicode 8.0 (probed on HF tokenizers 0.23.2).
  EXPECT_TRUE(is_bert_punctuation(0x1173C));  // 8.0 Po
  EXPECT_FALSE(is_bert_punctuation(0x2E43));  // 9.0 Po
  EXPECT_FALSE(is_bert_punctuation(0x2E52));  // 13.0 Po
  EXPECT_TRUE(is_nonspacing_mark(0x8E3));     // 8.0 Mn
  EXPECT_FALSE(is_nonspacing_mark(0x8D4));    // 9.0 Mn
  EXPECT_FALSE(is_nonspacing_mark(0x1ABF));   // 13.0 Mn
  EXPECT_TRUE(is_other(0x1BCA0));             // 7.0 Cf
  EXPECT_FALSE(is_other(0x110CD));            // 11.0 Cf
  EXPECT_FALSE(is_other(0x13430));            // 12.0 Cf
  EXPECT_TRUE(assigned_in_unicode8(0x41));
  EXPECT_FALSE(assigned_in_unicode8(0x378));
  EXPECT_TRUE(assigned_in_unicode8(0x10FFFD));  // plane 16 private use
  EXPECT_FALSE(assigned_in_unicode8(0x30000));  // CJK extension G, 13.0
  EXPECT_EQ(combining_class(0x301), 230);
  EXPECT_EQ(combining_class('a'), 0);
}

TEST(Unicode, DecomposeAndLower) {
  char32_t d[8];
  ASSERT_EQ(decompose(0xE9, d, 8), 2);  // é -> e + U+0301
  EXPECT_EQ(d[0], U'e');
  EXPECT_EQ(d[1], 0x301u);
  ASSERT_EQ(decompose(0xAC00, d, 8), 2);  // 가 -> U+1100 U+1161
  EXPECT_EQ(d[0], 0x1100u);
  ASSERT_EQ(decompose(0x1E69, d, 8), 3);  // ṩ -> s + dot below + dot above (recursive, canonical order)
  EXPECT_EQ(d[1], 0x323u);
  ASSERT_EQ(decompose(0xFB01, d, 8), 1);  // the fi ligature is a compatibility mapping only: untouched
  EXPECT_EQ(d[0], 0xFB01u);
  char32_t l[2];
  ASSERT_EQ(to_lower(0x130, l), 2);
  EXPECT_EQ(l[0], U'i');
  EXPECT_EQ(l[1], 0x307u);
  ASSERT_EQ(to_lower(0x3A3, l), 1);  // Σ -> σ without final-sigma context (char::to_lowercase)
  EXPECT_EQ(l[0], 0x3C3u);
  ASSERT_EQ(to_lower(0x1E9E, l), 1);  // ẞ -> ß
  EXPECT_EQ(l[0], 0xDFu);
  ASSERT_EQ(to_lower(0x1C5, l), 1);  // titlecase ǅ -> ǆ
  EXPECT_EQ(l[0], 0x1C6u);
}

}  // namespace
}  // namespace ct::text

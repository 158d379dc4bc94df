// Character classes and per-character Unicode operations with the exact definitions HF's Rust tokenizers use
// (Rust char::is_whitespace, unicode_categories' is_other / is_punctuation / is_mark_nonspacing,
// char::to_lowercase), backed by utf8proc's tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ct::text {

constexpr char32_t kReplacementChar = 0xFFFD;

// Decodes one code point at `p` (n > 0 bytes available) and stores its byte length in `len`. Malformed UTF-8
// (bad lead byte, truncated or overlong sequence, surrogate, > U+10FFFF) yields U+FFFD with len = 1, so every
// byte of the input is accounted for and offsets stay on the original bytes.
char32_t decode_utf8(const char* p, size_t n, size_t& len);
void append_utf8(std::string& out, char32_t c);

// Rust's char::is_whitespace (the Unicode White_Space property).
bool is_whitespace(char32_t c);
// HF classifies with the unicode_categories crate, whose tables are Unicode 8.0 (probed on tokenizers 0.23:
// U+1173C (8.0) is punctuation, U+2E43 (9.0) is not; U+08E3 (8.0) is Mn, U+08D4 (9.0) is not; U+110CD (Cf,
// 11.0) is kept). So is_other, is_bert_punctuation and is_nonspacing_mark take utf8proc's category only for
// characters assigned by Unicode 8.0.
bool assigned_in_unicode8(char32_t c);
// The same for Unicode 9.0, the tables of HF's normalizers (NF*, StripAccents).
bool assigned_in_unicode9(char32_t c);

// What BertNormalizer's clean_text drops besides NUL and U+FFFD: Cc, Cf, Co, Cs. Unassigned code points (Cn)
// are kept, as the real HF tokenizer does (U+0378, U+FFFF, U+10FFFF survive).
bool is_other(char32_t c);
// HF BertPreTokenizer punctuation: ASCII punctuation (which includes symbols such as $ + < = > ^ ` | ~) or
// P*.
bool is_bert_punctuation(char32_t c);
// The CJK ideograph blocks BertNormalizer pads with spaces (Hangul and Kana excluded).
bool is_chinese_char(char32_t c);
bool is_nonspacing_mark(char32_t c);  // category Mn (as of Unicode 8.0)
int combining_class(char32_t c);

// Canonical decomposition (NFD of a single character, Hangul included, not yet reordered). Writes up to `cap`
// code points to `out` and returns how many the full decomposition has.
int decompose(char32_t c, char32_t* out, int cap);
// Rust's char::to_lowercase: the simple mapping, except U+0130 which becomes "i" + U+0307. Returns 1 or 2.
int to_lower(char32_t c, char32_t out[2]);

}  // namespace ct::text

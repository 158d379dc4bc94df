// Unicode helpers for the BERT tokenizer; see unicode.h for which HF/Rust definition each one mirrors.
#include "text/unicode.h"

#include <utf8proc.h>

namespace ct::text {

char32_t decode_utf8(const char* p, size_t n, size_t& len) {
  const auto* s = reinterpret_cast<const unsigned char*>(p);
  const unsigned b0 = s[0];
  len = 1;
  if (b0 < 0x80) return b0;
  auto cont = [&](size_t i) { return i < n && (s[i] & 0xC0) == 0x80; };
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (!cont(1)) return kReplacementChar;
    len = 2;
    return ((b0 & 0x1F) << 6) | (s[1] & 0x3F);
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!cont(1) || !cont(2)) return kReplacementChar;
    const char32_t c = ((b0 & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F);
    if (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF)) return kReplacementChar;  // overlong or surrogate
    len = 3;
    return c;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return kReplacementChar;
    const char32_t c = ((b0 & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F);
    if (c < 0x10000 || c > 0x10FFFF) return kReplacementChar;
    len = 4;
    return c;
  }
  return kReplacementChar;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

bool is_whitespace(char32_t c) {
  if (c < 0x80) return (c >= 0x09 && c <= 0x0D) || c == 0x20;
  switch (c) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

static utf8proc_category_t category(char32_t c) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(c));
}

bool is_other(char32_t c) {
  switch (category(c)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
      return assigned_in_unicode8(c);
    default:
      return false;
  }
}

bool is_bert_punctuation(char32_t c) {
  if (c < 0x80) {
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
  }
  const auto cat = category(c);
  return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO && assigned_in_unicode8(c);
}

bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool is_nonspacing_mark(char32_t c) {
  return category(c) == UTF8PROC_CATEGORY_MN && assigned_in_unicode8(c);
}

int combining_class(char32_t c) {
  return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class;
}

int decompose(char32_t c, char32_t* out, int cap) {
  static_assert(sizeof(char32_t) == sizeof(utf8proc_int32_t));
  int boundclass = UTF8PROC_BOUNDCLASS_START;
  const utf8proc_ssize_t n =
      utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), reinterpret_cast<utf8proc_int32_t*>(out), cap,
                              UTF8PROC_DECOMPOSE, &boundclass);
  if (n < 0) {  // not a valid code point: leave it alone
    if (cap > 0) out[0] = c;
    return 1;
  }
  return static_cast<int>(n);
}

int to_lower(char32_t c, char32_t out[2]) {
  if (c == 0x130) {  // SpecialCasing: the only unconditional one-to-many lower-case mapping
    out[0] = U'i';
    out[1] = 0x307;
    return 2;
  }
  out[0] = static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
  return 1;
}

}  // namespace ct::text

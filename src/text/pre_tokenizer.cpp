// BertPreTokenizer with a table for ASCII; see pre_tokenizer.h.
#include "text/pre_tokenizer.h"

#include <array>

#include "text/unicode.h"

namespace ct::text {
namespace {

enum CharClass : uint8_t { kWord, kSpace, kPunct };

constexpr std::array<uint8_t, 128> make_ascii_classes() {
  std::array<uint8_t, 128> t{};
  for (int c = 0; c < 128; ++c) {
    if ((c >= 0x09 && c <= 0x0D) || c == 0x20) {
      t[c] = kSpace;
    } else if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
               (c >= 123 && c <= 126)) {
      t[c] = kPunct;
    } else {
      t[c] = kWord;
    }
  }
  return t;
}
constexpr std::array<uint8_t, 128> kAscii = make_ascii_classes();

uint8_t classify(char32_t c) {
  if (c < 0x80) return kAscii[c];
  if (is_whitespace(c)) return kSpace;
  if (is_bert_punctuation(c)) return kPunct;
  return kWord;
}

}  // namespace

void bert_pre_tokenize(const std::vector<NormChar>& chars, std::vector<WordSpan>& words) {
  words.clear();
  const auto n = static_cast<uint32_t>(chars.size());
  uint32_t start = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t cls = classify(chars[i].cp);
    if (cls == kWord) continue;
    if (start < i) words.push_back({start, i});
    if (cls == kPunct) words.push_back({i, i + 1});
    start = i + 1;
  }
  if (start < n) words.push_back({start, n});
}

}  // namespace ct::text

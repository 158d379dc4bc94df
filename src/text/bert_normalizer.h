// HF BertNormalizer with alignment: every normalized character remembers the byte span of the original
// character it came from, so token offsets point into the caller's text (what HF's NormalizedString
// alignments do).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ct::text {

struct NormChar {
  char32_t cp;
  int32_t begin;  // original byte span (offset by the caller's base)
  int32_t end;
};

class BertNormalizer {
 public:
  BertNormalizer(bool clean_text, bool handle_chinese_chars, bool strip_accents, bool lowercase)
      : clean_text_(clean_text), chinese_(handle_chinese_chars), strip_(strip_accents), lower_(lowercase) {}

  // Appends the normalized characters of `text` to `out`; spans are offset by `base`. Steps in HF's order:
  // clean_text, handle_chinese_chars, strip_accents (NFD, drop Mn), lowercase.
  void normalize(std::string_view text, int32_t base, std::vector<NormChar>& out) const;

 private:
  bool clean_text_, chinese_, strip_, lower_;
};

}  // namespace ct::text

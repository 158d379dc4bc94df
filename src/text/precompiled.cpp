#include "text/precompiled.h"

#include <utf8proc.h>

#include <cstring>

#include "core/error.h"
#include "text/unicode.h"

namespace ct::text {
namespace {

bool has_leaf(uint32_t u) {
  return (u >> 8) & 1;
}
uint32_t value(uint32_t u) {
  return u & 0x7FFFFFFFu;
}
uint32_t label(uint32_t u) {
  return u & (0x80000000u | 0xFFu);
}
uint32_t offset(uint32_t u) {
  return (u >> 10) << ((u & 0x200u) >> 6);
}

// Appends the changes for `new_part` replacing `old_chars` characters, as HF's Precompiled `replace`: the
// characters it adds are marked inserted at the end, the ones it loses are charged to the last entry so far.
void replace(Changes& changes, size_t old_chars, std::string_view new_part) {
  const std::u32string repl = NormalizedString(new_part).chars();
  const auto diff = static_cast<ptrdiff_t>(repl.size()) - static_cast<ptrdiff_t>(old_chars);
  for (char32_t c : repl) changes.push_back({c, 0});
  if (diff > 0) {
    for (ptrdiff_t k = 0; k < diff; ++k) changes[changes.size() - 1 - static_cast<size_t>(k)].change = 1;
  } else if (diff < 0 && !changes.empty()) {
    changes.back().change += static_cast<int>(diff);
  }
}

size_t count_chars(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string base64_decode(std::string_view in, const std::string& where) {
  auto val = [&](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const int v = val(c);
    CT_CHECK(v >= 0, where, ": not base64 (character '", c, "')");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

Precompiled::Precompiled(std::string blob, const std::string& where) {
  if (blob.empty()) return;  // HF accepts an empty charsmap: no rules
  CT_CHECK(blob.size() >= 4, where, ": precompiled_charsmap of ", blob.size(), " bytes is too short");
  uint32_t trie_size = 0;
  for (int k = 0; k < 4; ++k)
    trie_size |= static_cast<uint32_t>(static_cast<unsigned char>(blob[k])) << (8 * k);
  CT_CHECK(trie_size % 4 == 0 && trie_size > 0 && trie_size <= blob.size() - 4, where,
           ": precompiled_charsmap trie size ", trie_size, " does not fit its ", blob.size(), " bytes");
  units_.resize(trie_size / 4);
  std::memcpy(units_.data(), blob.data() + 4, trie_size);  // little-endian host, as SentencePiece assumes
  pool_ = blob.substr(4 + trie_size);
}

const char* Precompiled::transform(std::string_view chunk) const {
  if (units_.empty()) return nullptr;
  uint32_t pos = offset(units_[0]);
  for (char ch : chunk) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) break;
    pos ^= c;
    if (pos >= units_.size()) return nullptr;  // a corrupt trie walks off the end
    const uint32_t u = units_[pos];
    if (label(u) != c) return nullptr;
    pos ^= offset(u);
    if (pos >= units_.size()) return nullptr;
    if (has_leaf(u)) {
      const uint32_t v = value(units_[pos]);
      if (v >= pool_.size()) return nullptr;
      return pool_.c_str() + v;
    }
  }
  return nullptr;
}

void Precompiled::normalize(NormalizedString& s) const {
  const std::string& text = s.get();
  Changes changes;
  changes.reserve(text.size());
  bool modified = false;
  size_t i = 0;
  while (i < text.size()) {
    // One extended grapheme cluster [i, j).
    int32_t state = 0;
    size_t len;
    char32_t prev = decode_utf8(text.data() + i, text.size() - i, len);
    size_t j = i + len;
    while (j < text.size()) {
      const char32_t c = decode_utf8(text.data() + j, text.size() - j, len);
      if (utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(prev),
                                           static_cast<utf8proc_int32_t>(c), &state))
        break;
      prev = c;
      j += len;
    }
    const std::string_view g(text.data() + i, j - i);
    const char* norm = g.size() < 6 ? transform(g) : nullptr;
    if (norm) {
      modified = true;
      replace(changes, count_chars(g), norm);
    } else {
      size_t k = 0;
      while (k < g.size()) {
        const char32_t c = decode_utf8(g.data() + k, g.size() - k, len);
        const std::string_view part = g.substr(k, len);
        if (const char* n = transform(part)) {
          modified = true;
          replace(changes, 1, n);
        } else {
          changes.push_back({c, 0});
        }
        k += len;
      }
    }
    i = j;
  }
  if (modified) s.transform(changes, 0);
}

}  // namespace ct::text

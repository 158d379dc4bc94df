#include "text/normalized_string.h"

#include <algorithm>

#include "text/regex.h"
#include "text/unicode.h"

namespace ct::text {
MatchList find_matches(const Regex& re, std::string_view text) {
  if (text.empty()) return {{{0, 0}, false}};
  MatchList out;
  size_t prev = 0;
  for (auto [s, e] : re.find_all(text)) {
    if (prev != s) out.push_back({{prev, s}, false});
    out.push_back({{s, e}, true});
    prev = e;
  }
  if (prev != text.size()) out.push_back({{prev, text.size()}, false});
  return out;
}

MatchList find_matches(const std::function<bool(char32_t)>& pred, std::string_view text) {
  MatchList out;
  size_t last = 0, i = 0;
  while (i < text.size()) {
    size_t len;
    const char32_t c = decode_utf8(text.data() + i, text.size() - i, len);
    if (pred(c)) {
      if (last < i) out.push_back({{last, i}, false});
      out.push_back({{i, i + len}, true});
      last = i + len;
    }
    i += len;
  }
  if (i > last) out.push_back({{last, i}, false});
  return out;
}

NormalizedString::NormalizedString(std::string_view original, size_t shift)
    : original_(original), normalized_(original), shift_(shift) {
  align_.resize(original.size());
  size_t i = 0;
  while (i < original.size()) {
    size_t len;
    decode_utf8(original.data() + i, original.size() - i, len);
    for (size_t k = 0; k < len; ++k)
      align_[i + k] = {static_cast<uint32_t>(i), static_cast<uint32_t>(i + len)};
    i += len;
  }
}

std::pair<size_t, size_t> NormalizedString::to_original(size_t b, size_t e) const {
  if (b >= e) return {b, e};
  return {align_[b].begin, align_[e - 1].end};
}

std::u32string NormalizedString::chars() const {
  std::u32string out;
  size_t i = 0;
  while (i < normalized_.size()) {
    size_t len;
    out.push_back(decode_utf8(normalized_.data() + i, normalized_.size() - i, len));
    i += len;
  }
  return out;
}

void NormalizedString::transform_range(size_t b, size_t e, const Changes& changes, size_t initial_offset) {
  // The old characters of the range, consumed left to right as the changes replace or delete them.
  size_t cursor = b;
  auto next_old = [&]() -> size_t {
    if (cursor >= e) return 0;
    size_t len;
    decode_utf8(normalized_.data() + cursor, e - cursor, len);
    cursor += len;
    return len;
  };
  for (size_t k = 0; k < initial_offset; ++k) next_old();
  std::string text;
  std::vector<Span> align;
  text.reserve(e - b);
  align.reserve(e - b);
  for (const auto& [c, change] : changes) {
    Span a{};
    if (change > 0) {
      if (cursor >= 1 && cursor - 1 < align_.size()) a = align_[cursor - 1];
    } else {
      if (cursor < align_.size()) a = align_[cursor];
      next_old();
      for (int k = 0; k < -change; ++k) next_old();
    }
    const size_t before = text.size();
    append_utf8(text, c);
    align.insert(align.end(), text.size() - before, a);
  }
  normalized_.replace(b, e - b, text);
  align_.erase(align_.begin() + static_cast<ptrdiff_t>(b), align_.begin() + static_cast<ptrdiff_t>(e));
  align_.insert(align_.begin() + static_cast<ptrdiff_t>(b), align.begin(), align.end());
}

void NormalizedString::prepend(std::string_view s) {
  if (normalized_.empty() || s.empty()) return;
  size_t len;
  const char32_t first = decode_utf8(normalized_.data(), normalized_.size(), len);
  Changes ch;
  const NormalizedString tmp(s);
  int i = 0;
  for (char32_t c : tmp.chars()) ch.push_back({c, i++ != 0 ? 1 : 0});
  ch.push_back({first, 1});
  transform_range(0, len, ch, 0);
}

void NormalizedString::lowercase() {
  Changes ch;
  ch.reserve(normalized_.size());
  for (char32_t c : chars()) {
    char32_t out[2];
    const int n = to_lower(c, out);
    for (int k = 0; k < n; ++k) ch.push_back({out[k], k > 0 ? 1 : 0});
  }
  transform(ch, 0);
}

void NormalizedString::filter(const std::function<bool(char32_t)>& keep) {
  Changes ch;
  int removed = 0;
  size_t removed_start = 0;
  bool have_last = false;
  char32_t last = 0;
  for (char32_t c : chars()) {
    if (keep(c)) {
      if (have_last) {
        ch.push_back({last, -removed});
      } else {
        removed_start = static_cast<size_t>(removed);
      }
      last = c;
      have_last = true;
      removed = 0;
    } else {
      ++removed;
    }
  }
  if (have_last) ch.push_back({last, -removed});
  transform(ch, removed_start);
}

void NormalizedString::map(const std::function<char32_t(char32_t)>& f) {
  Changes ch;
  for (char32_t c : chars()) ch.push_back({f(c), 0});
  transform(ch, 0);
}

void NormalizedString::strip(bool left, bool right) {
  const std::u32string cs = chars();
  size_t lead = 0, trail = 0;
  if (left) {
    while (lead < cs.size() && is_whitespace(cs[lead])) ++lead;
  }
  if (right) {
    while (trail < cs.size() && is_whitespace(cs[cs.size() - 1 - trail])) ++trail;
  }
  if (lead == 0 && trail == 0) return;
  Changes ch;
  for (size_t i = lead; i + trail < cs.size(); ++i) ch.push_back({cs[i], 0});
  transform(ch, lead);
}

void NormalizedString::replace(const MatchList& matches, std::string_view content) {
  // One pass with the result of HF's per-match transform_range(match, content inserted, match deleted): every
  // content character aligns to the match's last byte (or to the byte before an empty match).
  std::string text;
  std::vector<Span> align;
  text.reserve(normalized_.size() + content.size());
  align.reserve(normalized_.size() + content.size());
  size_t pos = 0;
  for (const auto& [range, is_match] : matches) {
    if (!is_match) continue;
    const auto [b, e] = range;
    text.append(normalized_, pos, b - pos);
    align.insert(align.end(), align_.begin() + static_cast<ptrdiff_t>(pos),
                 align_.begin() + static_cast<ptrdiff_t>(b));
    const Span a = e >= 1 ? align_[e - 1] : Span{};
    text.append(content);
    align.insert(align.end(), content.size(), a);
    pos = e;
  }
  if (pos == 0 && text.empty()) return;  // no match
  text.append(normalized_, pos, std::string::npos);
  align.insert(align.end(), align_.begin() + static_cast<ptrdiff_t>(pos), align_.end());
  normalized_ = std::move(text);
  align_ = std::move(align);
}

NormalizedString NormalizedString::slice(size_t b, size_t e) const {
  NormalizedString out;
  auto [ob, oe] = to_original(b, e);
  if (ob > oe || oe > original_.size()) ob = oe = 0;
  out.original_ = original_.substr(ob, oe - ob);
  out.normalized_ = normalized_.substr(b, e - b);
  out.align_.assign(align_.begin() + static_cast<ptrdiff_t>(b), align_.begin() + static_cast<ptrdiff_t>(e));
  for (auto& a : out.align_) {
    a.begin = a.begin >= ob ? a.begin - static_cast<uint32_t>(ob) : 0;
    a.end = a.end >= ob ? a.end - static_cast<uint32_t>(ob) : 0;
  }
  out.shift_ = shift_ + ob;
  return out;
}

std::vector<NormalizedString> NormalizedString::split(MatchList matches, SplitBehavior behavior,
                                                      bool invert) const {
  if (invert) {
    for (auto& m : matches) m.second = !m.second;
  }
  // (range, remove) after applying the behavior, as HF's NormalizedString::split.
  MatchList pieces;
  bool prev = false;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (auto& m : matches) pieces.push_back({m.first, false});
      break;
    case SplitBehavior::kRemoved:
      pieces = matches;
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (auto& [r, is_match] : matches) {
        if (is_match && !prev && !pieces.empty()) {
          pieces.back().first.second = r.second;
        } else {
          pieces.push_back({r, false});
        }
        prev = is_match;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
        if (it->second && !prev && !pieces.empty()) {
          pieces.back().first.first = it->first.first;
        } else {
          pieces.push_back({it->first, false});
        }
        prev = it->second;
      }
      std::reverse(pieces.begin(), pieces.end());
      break;
    case SplitBehavior::kContiguous:
      for (auto& [r, is_match] : matches) {
        if (is_match == prev && !pieces.empty()) {
          pieces.back().first.second = r.second;
        } else {
          pieces.push_back({r, false});
        }
        prev = is_match;
      }
      break;
  }
  std::vector<NormalizedString> out;
  for (auto& [r, remove] : pieces) {
    if (!remove) out.push_back(slice(r.first, r.second));
  }
  return out;
}

}  // namespace ct::text

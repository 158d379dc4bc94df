#include "text/added_tokens.h"

#include <algorithm>

#include "text/normalizers.h"
#include "text/regex.h"
#include "text/unicode.h"

namespace ct::text {
namespace {

// Rust regex's Unicode \w (HF's single_word check): Alphabetic, marks, decimal digits, connector punctuation,
// joiners; Oniguruma knows the Alphabetic property, utf8proc does not.
bool is_word_char(char32_t c) {
  static const Regex word(R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}])", "single_word");
  std::string s;
  append_utf8(s, c);
  return !word.find_all(s).empty();
}

char32_t last_char(std::string_view s) {
  size_t i = s.size();
  while (i > 0 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) --i;
  if (i > 0) --i;
  size_t len;
  return decode_utf8(s.data() + i, s.size() - i, len);
}

}  // namespace

void AddedVocabulary::build(std::vector<AddedToken> tokens, const Normalizer* normalizer) {
  tokens_ = std::move(tokens);
  raw_ = {};
  normalized_ = {};
  normalized_forms_.assign(tokens_.size(), std::string());
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const AddedToken& t = tokens_[i];
    if (t.content.empty()) continue;
    if (t.normalized && normalizer) {
      NormalizedString n(t.content);
      normalizer->normalize(n);
      if (n.get() != t.content) normalized_forms_[i] = n.get();
      if (!n.get().empty()) normalized_.entries.push_back({n.get(), i});
    } else if (t.normalized) {
      normalized_.entries.push_back({t.content, i});
    } else {
      raw_.entries.push_back({t.content, i});
    }
  }
  index(raw_);
  index(normalized_);
}

void AddedVocabulary::index(MatchSet& set) const {
  for (size_t e = 0; e < set.entries.size(); ++e) {
    set.by_first_byte[static_cast<unsigned char>(set.entries[e].first[0])].push_back(e);
  }
  for (auto& v : set.by_first_byte) {
    // Longest first; on equal patterns the first registered wins, as the automaton keeps the first value.
    std::stable_sort(v.begin(), v.end(), [&](size_t a, size_t b) {
      return set.entries[a].first.size() > set.entries[b].first.size();
    });
  }
}

const AddedToken* AddedVocabulary::find(std::string_view content) const {
  for (const auto& t : tokens_) {
    if (t.content == content) return &t;
  }
  return nullptr;
}

std::string AddedVocabulary::shown(const AddedToken& t) const {
  const auto i = static_cast<size_t>(&t - tokens_.data());
  return i < normalized_forms_.size() && !normalized_forms_[i].empty() ? normalized_forms_[i] : t.content;
}

const AddedToken* AddedVocabulary::find(int32_t id) const {
  for (const auto& t : tokens_) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

std::vector<Split> AddedVocabulary::split(NormalizedString s, const MatchSet& set) const {
  std::vector<Split> out;
  const std::string& text = s.get();
  if (text.empty()) return out;
  if (set.empty()) {
    out.push_back({std::move(s), {}, false});
    return out;
  }
  size_t start_offset = 0;
  size_t i = 0;
  auto add = [&](size_t b, size_t e, const AddedToken* t) {
    NormalizedString piece = s.slice(b, e);
    if (piece.empty()) return;
    Split sp{std::move(piece), {}, t != nullptr};
    if (t) sp.tokens.push_back({t->id, sp.text.get(), 0, static_cast<uint32_t>(sp.text.get().size())});
    out.push_back(std::move(sp));
  };
  while (i < text.size()) {
    const auto& cands = set.by_first_byte[static_cast<unsigned char>(text[i])];
    const std::pair<std::string, size_t>* m = nullptr;
    for (size_t e : cands) {
      const auto& [pat, idx] = set.entries[e];
      if (text.compare(i, pat.size(), pat) == 0) {
        m = &set.entries[e];
        break;
      }
    }
    if (!m) {
      ++i;
      continue;
    }
    size_t start = i, stop = i + m->first.size();
    i = stop;  // the automaton does not retry inside a match, even a discarded one
    const AddedToken& t = tokens_[m->second];
    if (t.single_word) {
      size_t len;
      const bool start_ok = start == 0 || !is_word_char(last_char(std::string_view(text).substr(0, start)));
      const bool stop_ok =
          stop == text.size() || !is_word_char(decode_utf8(text.data() + stop, text.size() - stop, len));
      if (!start_ok || !stop_ok) continue;
    }
    if (t.lstrip) {
      size_t b = start;
      while (b > 0) {
        const std::string_view before = std::string_view(text).substr(0, b);
        const char32_t c = last_char(before);
        if (!is_whitespace(c)) break;
        std::string tmp;
        append_utf8(tmp, c);
        b -= tmp.size();
      }
      start = std::max(b, start_offset);
    }
    if (t.rstrip) {
      while (stop < text.size()) {
        size_t len;
        const char32_t c = decode_utf8(text.data() + stop, text.size() - stop, len);
        if (!is_whitespace(c)) break;
        stop += len;
      }
    }
    if (start_offset < start) add(start_offset, start, nullptr);
    add(start, stop, &t);
    start_offset = stop;
  }
  if (start_offset != text.size()) add(start_offset, text.size(), nullptr);
  return out;
}

std::vector<Split> AddedVocabulary::extract_and_normalize(std::string_view text,
                                                          const Normalizer* normalizer) const {
  std::vector<Split> out;
  for (auto& sp : split(NormalizedString(text), raw_)) {
    if (sp.tokenized) {
      out.push_back(std::move(sp));
      continue;
    }
    if (normalizer) normalizer->normalize(sp.text);
    for (auto& piece : split(std::move(sp.text), normalized_)) out.push_back(std::move(piece));
  }
  return out;
}

}  // namespace ct::text

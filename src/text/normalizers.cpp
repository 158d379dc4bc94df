#include "text/normalizers.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>

#include "text/json_fields.h"
#include "text/precompiled.h"
#include "text/regex.h"
#include "text/unicode.h"

namespace ct::text {

std::u32string jf::utf32(const std::string& s) {
  return NormalizedString(s).chars();
}

namespace {

using nlohmann::json;

// HF's tables are Unicode 9.0 (unicode-normalization-alignments); utf8proc's are newer. Characters assigned
// later count as unassigned: no mark, combining class 0, no decomposition.
bool is_combining_mark(char32_t c) {
  if (!assigned_in_unicode9(c)) return false;
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_MC || cat == UTF8PROC_CATEGORY_ME;
}

int ccc(char32_t c) {
  if (!assigned_in_unicode9(c)) return 0;
  return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class;
}

// Decomposition with canonical reordering; a character's first code point replaces it (0), the rest are
// inserted (1); reordering moves the tags with the code points.
Changes decompose_stream(const std::u32string& in, bool compat) {
  Changes out;
  out.reserve(in.size());
  size_t pending = 0;  // start of the run of non-starters still to be sorted
  auto flush = [&]() {
    std::stable_sort(out.begin() + static_cast<ptrdiff_t>(pending), out.end(),
                     [](const Change& a, const Change& b) { return ccc(a.c) < ccc(b.c); });
  };
  for (char32_t c : in) {
    utf8proc_int32_t buf[32];
    int last = 0;
    const auto opts = static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | (compat ? UTF8PROC_COMPAT : 0));
    utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), buf, 32, opts, &last);
    if (n <= 0 || n > 32 || !assigned_in_unicode9(c)) {
      buf[0] = static_cast<utf8proc_int32_t>(c);
      n = 1;
    }
    for (utf8proc_ssize_t k = 0; k < n; ++k) {
      const auto d = static_cast<char32_t>(buf[k]);
      if (ccc(d) == 0) {
        flush();
        out.push_back({d, k == 0 ? 0 : 1});
        pending = out.size();
      } else {
        out.push_back({d, k == 0 ? 0 : 1});
      }
    }
  }
  flush();
  return out;
}

// The primary composite of a + b, or 0.
char32_t compose_pair(char32_t a, char32_t b) {
  if (!assigned_in_unicode9(a) || !assigned_in_unicode9(b)) return 0;
  utf8proc_int32_t buf[2] = {static_cast<utf8proc_int32_t>(a), static_cast<utf8proc_int32_t>(b)};
  const utf8proc_ssize_t n =
      utf8proc_normalize_utf32(buf, 2, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE));
  return n == 1 ? static_cast<char32_t>(buf[0]) : 0;
}

// Canonical composition over a decomposed stream; a composition charges the absorbed code point's tag to the
// composite (a + b - 1), as the alignments crate does.
Changes compose_stream(const Changes& in) {
  Changes out;
  out.reserve(in.size());
  bool have_composee = false;
  Change composee{};
  int last_ccc = -1;  // -1: nothing buffered since the composee
  Changes buffer;
  for (const Change& ch : in) {
    const int cc = ccc(ch.c);
    if (!have_composee) {
      if (cc != 0) {
        out.push_back(ch);
        continue;
      }
      composee = ch;
      have_composee = true;
      continue;
    }
    if (last_ccc < 0) {
      if (const char32_t r = compose_pair(composee.c, ch.c)) {
        composee = {r, composee.change + ch.change - 1};
        continue;
      }
      if (cc == 0) {
        out.push_back(composee);
        composee = ch;
        continue;
      }
      buffer.push_back(ch);
      last_ccc = cc;
      continue;
    }
    if (last_ccc >= cc) {
      if (cc == 0) {
        out.push_back(composee);
        out.insert(out.end(), buffer.begin(), buffer.end());
        buffer.clear();
        composee = ch;
        last_ccc = -1;
        continue;
      }
      buffer.push_back(ch);
      last_ccc = cc;
      continue;
    }
    if (const char32_t r = compose_pair(composee.c, ch.c)) {
      composee = {r, composee.change + ch.change - 1};
      continue;
    }
    buffer.push_back(ch);
    last_ccc = cc;
  }
  if (have_composee) out.push_back(composee);
  out.insert(out.end(), buffer.begin(), buffer.end());
  return out;
}

class SequenceNormalizer : public Normalizer {
 public:
  std::vector<std::unique_ptr<Normalizer>> parts;
  void normalize(NormalizedString& s) const override {
    for (const auto& p : parts) p->normalize(s);
  }
};

class UnicodeNormalizer : public Normalizer {
 public:
  explicit UnicodeNormalizer(NormalForm f) : form_(f) {}
  void normalize(NormalizedString& s) const override { normalize_unicode(s, form_); }

 private:
  NormalForm form_;
};

class LowercaseNormalizer : public Normalizer {
 public:
  void normalize(NormalizedString& s) const override { s.lowercase(); }
};

class StripAccentsNormalizer : public Normalizer {
 public:
  void normalize(NormalizedString& s) const override {
    s.filter([](char32_t c) { return !is_combining_mark(c); });
  }
};

class StripNormalizer : public Normalizer {
 public:
  bool left = true, right = true;
  void normalize(NormalizedString& s) const override { s.strip(left, right); }
};

class PrependNormalizer : public Normalizer {
 public:
  std::string prepend;
  void normalize(NormalizedString& s) const override { s.prepend(prepend); }
};

class ReplaceNormalizer : public Normalizer {
 public:
  ReplaceNormalizer(const std::string& pattern, std::string content, const std::string& where)
      : re_(pattern, where), content_(std::move(content)) {}
  void normalize(NormalizedString& s) const override { s.replace(find_matches(re_, s.get()), content_); }

 private:
  Regex re_;
  std::string content_;
};

class PrecompiledNormalizer : public Normalizer {
 public:
  PrecompiledNormalizer(std::string blob, const std::string& where) : map_(std::move(blob), where) {}
  void normalize(NormalizedString& s) const override { map_.normalize(s); }

 private:
  Precompiled map_;
};

class NmtNormalizer : public Normalizer {
 public:
  void normalize(NormalizedString& s) const override {
    s.filter([](char32_t c) {
      return !((c >= 0x1 && c <= 0x8) || c == 0xB || (c >= 0xE && c <= 0x1F) || c == 0x7F || c == 0x8F ||
               c == 0x9F);
    });
    s.map([](char32_t c) -> char32_t {
      switch (c) {
        case 0x9:
        case 0xA:
        case 0xC:
        case 0xD:
        case 0x1680:
        case 0x2028:
        case 0x2029:
        case 0x2581:
        case 0xFEFF:
        case 0xFFFD:
          return ' ';
        default:
          return c >= 0x200B && c <= 0x200F ? ' ' : c;
      }
    });
  }
};

class BertNormalizerJson : public Normalizer {
 public:
  bool clean_text = true, chinese = true, lowercase = true;
  int strip_accents = -1;
  void normalize(NormalizedString& s) const override {
    if (clean_text) {
      s.filter([](char32_t c) {
        const bool control = !(c == '\t' || c == '\n' || c == '\r') && is_other(c);
        return !(c == 0 || c == 0xFFFD || control);
      });
      s.map([](char32_t c) -> char32_t {
        return c == '\t' || c == '\n' || c == '\r' || is_whitespace(c) ? U' ' : c;
      });
    }
    if (chinese) {
      Changes ch;
      for (char32_t c : s.chars()) {
        if (is_chinese_char(c)) {
          ch.push_back({' ', 0});
          ch.push_back({c, 1});
          ch.push_back({' ', 1});
        } else {
          ch.push_back({c, 0});
        }
      }
      s.transform(ch, 0);
    }
    if (strip_accents < 0 ? lowercase : strip_accents != 0) {
      normalize_unicode(s, NormalForm::kNFD);
      s.filter([](char32_t c) { return !is_nonspacing_mark(c); });
    }
    if (lowercase) s.lowercase();
  }
};

class ByteLevelNormalizer : public Normalizer {
 public:
  void normalize(NormalizedString& s) const override;
};

}  // namespace

char32_t byte_level_char(unsigned char b);

void ByteLevelNormalizer::normalize(NormalizedString& s) const {
  Changes ch;
  const std::string& t = s.get();
  size_t i = 0;
  while (i < t.size()) {
    size_t len;
    decode_utf8(t.data() + i, t.size() - i, len);
    for (size_t k = 0; k < len; ++k)
      ch.push_back({byte_level_char(static_cast<unsigned char>(t[i + k])), k > 0});
    i += len;
  }
  s.transform(ch, 0);
}

void normalize_unicode(NormalizedString& s, NormalForm form) {
  const bool compat = form == NormalForm::kNFKD || form == NormalForm::kNFKC;
  Changes ch = decompose_stream(s.chars(), compat);
  if (form == NormalForm::kNFC || form == NormalForm::kNFKC) ch = compose_stream(ch);
  s.transform(ch, 0);
}

std::unique_ptr<Normalizer> make_normalizer(const json& j, const std::string& where) {
  const std::string type = jf::type_of(j, where);
  if (type == "Sequence") {
    auto seq = std::make_unique<SequenceNormalizer>();
    const json* list = jf::find(j, "normalizers");
    CT_CHECK(list && list->is_array(), where, ".normalizers: expected a list");
    for (size_t i = 0; i < list->size(); ++i) {
      seq->parts.push_back(make_normalizer((*list)[i], str(where, ".normalizers[", i, "]")));
    }
    return seq;
  }
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(NormalForm::kNFC);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(NormalForm::kNFD);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(NormalForm::kNFKC);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(NormalForm::kNFKD);
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  if (type == "StripAccents") return std::make_unique<StripAccentsNormalizer>();
  if (type == "Nmt") return std::make_unique<NmtNormalizer>();
  if (type == "ByteLevel") return std::make_unique<ByteLevelNormalizer>();
  if (type == "Strip") {
    auto n = std::make_unique<StripNormalizer>();
    n->left = jf::get_bool(j, "strip_left", true, where);
    n->right = jf::get_bool(j, "strip_right", true, where);
    return n;
  }
  if (type == "Prepend") {
    auto n = std::make_unique<PrependNormalizer>();
    n->prepend = jf::need_string(j, "prepend", where);
    return n;
  }
  if (type == "Replace") {
    const json* p = jf::find(j, "pattern");
    CT_CHECK(p && p->is_object(), where, ".pattern: expected {\"String\": ...} or {\"Regex\": ...}");
    std::string pattern;
    if (const json* s = jf::find(*p, "String")) {
      CT_CHECK(s->is_string(), where, ".pattern.String: expected a string");
      pattern = Regex::escape(s->get<std::string>());
    } else if (const json* r = jf::find(*p, "Regex")) {
      CT_CHECK(r->is_string(), where, ".pattern.Regex: expected a string");
      pattern = r->get<std::string>();
    } else {
      fail(where, ".pattern: expected {\"String\": ...} or {\"Regex\": ...}, got ", p->dump());
    }
    return std::make_unique<ReplaceNormalizer>(pattern, jf::need_string(j, "content", where), where);
  }
  if (type == "Precompiled") {
    const std::string b64 = jf::get_string(j, "precompiled_charsmap", "", where);
    return std::make_unique<PrecompiledNormalizer>(base64_decode(b64, where + ".precompiled_charsmap"),
                                                   where + ".precompiled_charsmap");
  }
  if (type == "BertNormalizer") {
    auto n = std::make_unique<BertNormalizerJson>();
    n->clean_text = jf::get_bool(j, "clean_text", true, where);
    n->chinese = jf::get_bool(j, "handle_chinese_chars", true, where);
    n->lowercase = jf::get_bool(j, "lowercase", true, where);
    if (const json* sa = jf::find(j, "strip_accents")) {
      CT_CHECK(sa->is_boolean(), where, ".strip_accents: expected true, false or null");
      n->strip_accents = sa->get<bool>() ? 1 : 0;
    }
    return n;
  }
  jf::unsupported(where, "normalizer", type,
                  "BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Replace, Prepend, "
                  "Precompiled, Nmt, ByteLevel, Sequence");
}

}  // namespace ct::text

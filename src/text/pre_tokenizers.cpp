#include "text/pre_tokenizers.h"

#include <utf8proc.h>

#include <array>

#include "text/json_fields.h"
#include "text/regex.h"
#include "text/unicode.h"

namespace ct::text {

void PreTokenized::split(const std::function<std::vector<NormalizedString>(size_t, NormalizedString)>& f) {
  std::vector<Split> out;
  out.reserve(splits.size());
  for (size_t i = 0; i < splits.size(); ++i) {
    if (splits[i].tokenized) {
      out.push_back(std::move(splits[i]));
      continue;
    }
    for (auto& piece : f(i, std::move(splits[i].text))) {
      if (!piece.empty()) out.push_back({std::move(piece), {}, false});
    }
  }
  splits = std::move(out);
}

void PreTokenized::normalize(const std::function<void(NormalizedString&)>& f) {
  for (auto& s : splits) {
    if (!s.tokenized) f(s.text);
  }
}

namespace {

using nlohmann::json;

struct ByteTable {
  std::array<char32_t, 256> to_char{};
  ByteTable() {
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      to_char[b] = printable ? static_cast<char32_t>(b) : next++;
    }
  }
};
const ByteTable& byte_table() {
  static const ByteTable t;
  return t;
}

const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

bool is_numeric(char32_t c) {
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}

SplitBehavior parse_behavior(const json& j, const char* key, SplitBehavior fallback,
                             const std::string& where) {
  const std::string b = jf::get_string(j, key, "", where);
  if (b.empty()) return fallback;
  if (b == "Removed") return SplitBehavior::kRemoved;
  if (b == "Isolated") return SplitBehavior::kIsolated;
  if (b == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (b == "Contiguous") return SplitBehavior::kContiguous;
  fail(where, ".", key, ": '", b,
       "' is not a split behavior (expected one of Removed, Isolated, MergedWithPrevious, MergedWithNext, "
       "Contiguous)");
}

class SequencePre : public PreTokenizer {
 public:
  std::vector<std::unique_ptr<PreTokenizer>> parts;
  void pre_tokenize(PreTokenized& p) const override {
    for (const auto& part : parts) part->pre_tokenize(p);
  }
};

// Splits on a character class (whitespace, punctuation, digits, a delimiter).
class PredicateSplit : public PreTokenizer {
 public:
  PredicateSplit(std::function<bool(char32_t)> pred, SplitBehavior b)
      : pred_(std::move(pred)), behavior_(b) {}
  void pre_tokenize(PreTokenized& p) const override {
    p.split([&](size_t, NormalizedString s) { return s.split(find_matches(pred_, s.get()), behavior_); });
  }

 private:
  std::function<bool(char32_t)> pred_;
  SplitBehavior behavior_;
};

class RegexSplit : public PreTokenizer {
 public:
  RegexSplit(const std::string& pattern, SplitBehavior b, bool invert, const std::string& where)
      : re_(pattern, where), behavior_(b), invert_(invert) {}
  void pre_tokenize(PreTokenized& p) const override {
    p.split(
        [&](size_t, NormalizedString s) { return s.split(find_matches(re_, s.get()), behavior_, invert_); });
  }

 private:
  Regex re_;
  SplitBehavior behavior_;
  bool invert_;
};

class BertPre : public PreTokenizer {
 public:
  void pre_tokenize(PreTokenized& p) const override {
    p.split([](size_t, NormalizedString s) {
      return s.split(find_matches([](char32_t c) { return is_whitespace(c); }, s.get()),
                     SplitBehavior::kRemoved);
    });
    p.split([](size_t, NormalizedString s) {
      return s.split(find_matches([](char32_t c) { return is_bert_punctuation(c); }, s.get()),
                     SplitBehavior::kIsolated);
    });
  }
};

class ByteLevelPre : public PreTokenizer {
 public:
  ByteLevelPre(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space),
        re_(use_regex ? std::make_unique<Regex>(kGpt2Pattern, "ByteLevel") : nullptr) {}
  void pre_tokenize(PreTokenized& p) const override {
    p.split([&](size_t, NormalizedString s) {
      if (add_prefix_space_ && s.get().rfind(' ', 0) != 0) s.prepend(" ");
      if (re_) return s.split(find_matches(*re_, s.get()), SplitBehavior::kIsolated);
      return std::vector<NormalizedString>{std::move(s)};
    });
    p.normalize([](NormalizedString& s) {
      Changes ch;
      const std::string& t = s.get();
      ch.reserve(t.size());
      size_t i = 0;
      while (i < t.size()) {
        size_t len;
        decode_utf8(t.data() + i, t.size() - i, len);
        for (size_t k = 0; k < len; ++k)
          ch.push_back({byte_level_char(static_cast<unsigned char>(t[i + k])), k > 0 ? 1 : 0});
        i += len;
      }
      s.transform(ch, 0);
    });
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Regex> re_;
};

enum class Prepend { kAlways, kFirst, kNever };

class MetaspacePre : public PreTokenizer {
 public:
  MetaspacePre(char32_t replacement, Prepend scheme, bool split)
      : replacement_(replacement), scheme_(scheme), split_(split) {
    append_utf8(rep_, replacement);
  }
  void pre_tokenize(PreTokenized& p) const override {
    p.split([&](size_t, NormalizedString s) {
      s.replace(find_matches([](char32_t c) { return c == U' '; }, s.get()), rep_);
      const bool starts = s.get().rfind(rep_, 0) == 0;
      if (!starts && (scheme_ == Prepend::kAlways || (scheme_ == Prepend::kFirst && s.shift() == 0))) {
        s.prepend(rep_);
      }
      if (split_) {
        const char32_t r = replacement_;
        return s.split(find_matches([r](char32_t c) { return c == r; }, s.get()),
                       SplitBehavior::kMergedWithNext);
      }
      return std::vector<NormalizedString>{std::move(s)};
    });
  }

 private:
  char32_t replacement_;
  std::string rep_;
  Prepend scheme_;
  bool split_;
};

std::string split_pattern(const json& j, const std::string& where) {
  const json* p = jf::find(j, "pattern");
  CT_CHECK(p && p->is_object(), where, ".pattern: expected {\"String\": ...} or {\"Regex\": ...}");
  if (const json* s = jf::find(*p, "String")) {
    CT_CHECK(s->is_string(), where, ".pattern.String: expected a string");
    return Regex::escape(s->get<std::string>());
  }
  if (const json* r = jf::find(*p, "Regex")) {
    CT_CHECK(r->is_string(), where, ".pattern.Regex: expected a string");
    return r->get<std::string>();
  }
  fail(where, ".pattern: expected {\"String\": ...} or {\"Regex\": ...}, got ", p->dump());
}

}  // namespace

char32_t byte_level_char(unsigned char b) {
  return byte_table().to_char[b];
}

int byte_level_byte(char32_t c) {
  static const std::array<int, 512> inverse = [] {
    std::array<int, 512> inv{};
    inv.fill(-1);
    for (int b = 0; b < 256; ++b) inv[byte_level_char(static_cast<unsigned char>(b))] = b;
    return inv;
  }();
  return c < 512 ? inverse[c] : -1;
}

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const json& j, const std::string& where) {
  const std::string type = jf::type_of(j, where);
  if (type == "Sequence") {
    auto seq = std::make_unique<SequencePre>();
    const json* list = jf::find(j, "pretokenizers");
    CT_CHECK(list && list->is_array(), where, ".pretokenizers: expected a list");
    for (size_t i = 0; i < list->size(); ++i) {
      seq->parts.push_back(make_pre_tokenizer((*list)[i], str(where, ".pretokenizers[", i, "]")));
    }
    return seq;
  }
  if (type == "BertPreTokenizer") return std::make_unique<BertPre>();
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevelPre>(jf::get_bool(j, "add_prefix_space", true, where),
                                          jf::get_bool(j, "use_regex", true, where));
  }
  if (type == "Metaspace") {
    const std::u32string rep = jf::utf32(jf::get_string(j, "replacement", "\xE2\x96\x81", where));
    CT_CHECK(rep.size() == 1, where, ".replacement: expected one character");
    const std::string scheme = jf::get_string(j, "prepend_scheme", "", where);
    Prepend p = Prepend::kAlways;
    if (scheme == "first") {
      p = Prepend::kFirst;
    } else if (scheme == "never") {
      p = Prepend::kNever;
    } else if (scheme.empty()) {
      p = jf::get_bool(j, "add_prefix_space", true, where) ? Prepend::kAlways : Prepend::kNever;
    } else {
      CT_CHECK(scheme == "always", where, ".prepend_scheme: '", scheme,
               "' is not one of always, first, never");
    }
    return std::make_unique<MetaspacePre>(rep[0], p, jf::get_bool(j, "split", true, where));
  }
  if (type == "Whitespace") {
    // HF compiles this one with Rust's regex crate, whose \w is Alphabetic + marks + Nd + Pc + the joiners
    // (Oniguruma's \w lacks Nl, Other_Alphabetic symbols such as circled letters, and U+200C/U+200D).
    return std::make_unique<RegexSplit>(
        R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}]+|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}\s]+)",
        SplitBehavior::kRemoved, true, where);
  }
  if (type == "WhitespaceSplit") {
    return std::make_unique<PredicateSplit>([](char32_t c) { return is_whitespace(c); },
                                            SplitBehavior::kRemoved);
  }
  if (type == "Punctuation") {
    return std::make_unique<PredicateSplit>([](char32_t c) { return is_bert_punctuation(c); },
                                            parse_behavior(j, "behavior", SplitBehavior::kIsolated, where));
  }
  if (type == "Digits") {
    return std::make_unique<PredicateSplit>(is_numeric, jf::get_bool(j, "individual_digits", false, where)
                                                            ? SplitBehavior::kIsolated
                                                            : SplitBehavior::kContiguous);
  }
  if (type == "CharDelimiterSplit") {
    const std::u32string d = jf::utf32(jf::need_string(j, "delimiter", where));
    CT_CHECK(d.size() == 1, where, ".delimiter: expected one character");
    const char32_t c0 = d[0];
    return std::make_unique<PredicateSplit>([c0](char32_t c) { return c == c0; }, SplitBehavior::kRemoved);
  }
  if (type == "Split") {
    const json* b = jf::find(j, "behavior");
    CT_CHECK(b, where, ".behavior: missing");
    return std::make_unique<RegexSplit>(split_pattern(j, where),
                                        parse_behavior(j, "behavior", SplitBehavior::kIsolated, where),
                                        jf::get_bool(j, "invert", false, where), where);
  }
  jf::unsupported(
      where, "pre_tokenizer", type,
      "BertPreTokenizer, ByteLevel, Metaspace, Whitespace, WhitespaceSplit, Split, Punctuation, Digits, "
      "CharDelimiterSplit, Sequence");
}

}  // namespace ct::text

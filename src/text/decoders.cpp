#include "text/decoders.h"

#include "text/json_fields.h"
#include "text/normalized_string.h"
#include "text/pre_tokenizers.h"
#include "text/regex.h"
#include "text/unicode.h"

namespace ct::text {
namespace {

using nlohmann::json;

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

// Invalid UTF-8 becomes U+FFFD, as Rust's from_utf8_lossy.
std::string lossy(const std::string& bytes) {
  std::string out;
  size_t i = 0;
  while (i < bytes.size()) {
    size_t len;
    const char32_t c = decode_utf8(bytes.data() + i, bytes.size() - i, len);
    append_utf8(out, c);
    i += len;
  }
  return out;
}

class ByteLevelDec : public Decoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::string bytes;
    for (const auto& t : tokens) {
      for (char32_t c : NormalizedString(t).chars()) {
        const int b = byte_level_byte(c);
        if (b >= 0) {
          bytes.push_back(static_cast<char>(b));
        } else {
          append_utf8(bytes, c);
        }
      }
    }
    return {lossy(bytes)};
  }
};

class MetaspaceDec : public Decoder {
 public:
  std::string rep;
  bool prepend = true;
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string t = replace_all(tokens[i], rep, " ");
      if (i == 0 && prepend && !t.empty() && t[0] == ' ') t.erase(0, 1);
      tokens[i] = std::move(t);
    }
    return tokens;
  }
};

std::string wordpiece_cleanup(std::string s) {
  static const std::pair<const char*, const char*> rules[] = {
      {" .", "."},   {" ?", "?"},           {" !", "!"},   {" ,", ","},     {" ' ", "'"},   {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [a, b] : rules) s = replace_all(std::move(s), a, b);
  return s;
}

class WordPieceDec : public Decoder {
 public:
  std::string prefix = "##";
  bool cleanup = true;
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string& t = tokens[i];
      if (i != 0) {
        if (t.rfind(prefix, 0) == 0) {
          t.erase(0, prefix.size());
        } else {
          t = " " + t;
        }
      }
      if (cleanup) t = wordpiece_cleanup(std::move(t));
    }
    return tokens;
  }
};

class BpeDec : public Decoder {
 public:
  std::string suffix = "</w>";
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      tokens[i] = replace_all(tokens[i], suffix, i + 1 == tokens.size() ? "" : " ");
    }
    return tokens;
  }
};

class ReplaceDec : public Decoder {
 public:
  ReplaceDec(const std::string& pattern, std::string content, const std::string& where)
      : re_(pattern, where), content_(std::move(content)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (auto& t : tokens) {
      NormalizedString n(t);
      n.replace(find_matches(re_, t), content_);
      t = n.get();
    }
    return tokens;
  }

 private:
  Regex re_;
  std::string content_;
};

class ByteFallbackDec : public Decoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    size_t n_bytes = 0;
    auto flush = [&] {
      if (n_bytes == 0) return;
      // Rust's from_utf8 fails as a whole: then every byte token becomes one U+FFFD.
      bool valid = true;
      size_t i = 0;
      while (i < bytes.size()) {
        size_t len;
        if (decode_utf8(bytes.data() + i, bytes.size() - i, len) == kReplacementChar && len == 1)
          valid = false;
        i += len;
      }
      if (valid) {
        out.push_back(bytes);
      } else {
        for (size_t k = 0; k < n_bytes; ++k) out.push_back("\xEF\xBF\xBD");
      }
      bytes.clear();
      n_bytes = 0;
    };
    for (const auto& t : tokens) {
      if (t.size() == 6 && t.rfind("<0x", 0) == 0 && t[5] == '>') {
        char* end = nullptr;
        const std::string hex = t.substr(3, 2);
        const long v = std::strtol(hex.c_str(), &end, 16);
        if (end && *end == 0) {
          bytes.push_back(static_cast<char>(v));
          ++n_bytes;
          continue;
        }
      }
      flush();
      out.push_back(t);
    }
    flush();
    return out;
  }
};

class FuseDec : public Decoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::string all;
    for (const auto& t : tokens) all += t;
    return {all};
  }
};

class StripDec : public Decoder {
 public:
  char32_t content = ' ';
  size_t start = 0, stop = 0;
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (auto& t : tokens) {
      std::u32string cs = NormalizedString(t).chars();
      size_t b = 0, e = cs.size();
      while (b < start && b < e && cs[b] == content) ++b;
      size_t k = 0;
      while (k < stop && e > b && cs[e - 1] == content) --e, ++k;
      std::string s;
      for (size_t i = b; i < e; ++i) append_utf8(s, cs[i]);
      t = s;
    }
    return tokens;
  }
};

class SequenceDec : public Decoder {
 public:
  std::vector<std::unique_ptr<Decoder>> parts;
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (const auto& p : parts) tokens = p->decode_chain(std::move(tokens));
    return tokens;
  }
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const json& j, const std::string& where) {
  const std::string type = jf::type_of(j, where);
  if (type == "ByteLevel") return std::make_unique<ByteLevelDec>();
  if (type == "Metaspace") {
    auto d = std::make_unique<MetaspaceDec>();
    d->rep = jf::get_string(j, "replacement", "\xE2\x96\x81", where);
    const std::string scheme = jf::get_string(j, "prepend_scheme", "", where);
    d->prepend = scheme.empty() ? jf::get_bool(j, "add_prefix_space", true, where) : scheme != "never";
    return d;
  }
  if (type == "WordPiece") {
    auto d = std::make_unique<WordPieceDec>();
    d->prefix = jf::get_string(j, "prefix", "##", where);
    d->cleanup = jf::get_bool(j, "cleanup", true, where);
    return d;
  }
  if (type == "BPEDecoder") {
    auto d = std::make_unique<BpeDec>();
    d->suffix = jf::get_string(j, "suffix", "</w>", where);
    return d;
  }
  if (type == "Replace") {
    const json* p = jf::find(j, "pattern");
    CT_CHECK(p && p->is_object(), where, ".pattern: expected {\"String\": ...} or {\"Regex\": ...}");
    std::string pattern;
    if (const json* s = jf::find(*p, "String")) {
      pattern = Regex::escape(s->is_string() ? s->get<std::string>() : "");
    } else if (const json* r = jf::find(*p, "Regex")) {
      CT_CHECK(r->is_string(), where, ".pattern.Regex: expected a string");
      pattern = r->get<std::string>();
    } else {
      fail(where, ".pattern: expected {\"String\": ...} or {\"Regex\": ...}");
    }
    return std::make_unique<ReplaceDec>(pattern, jf::need_string(j, "content", where), where);
  }
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDec>();
  if (type == "Fuse") return std::make_unique<FuseDec>();
  if (type == "Strip") {
    auto d = std::make_unique<StripDec>();
    const std::u32string c = jf::utf32(jf::get_string(j, "content", " ", where));
    CT_CHECK(c.size() == 1, where, ".content: expected one character");
    d->content = c[0];
    d->start = static_cast<size_t>(std::max<int64_t>(0, jf::get_int(j, "start", 0, where)));
    d->stop = static_cast<size_t>(std::max<int64_t>(0, jf::get_int(j, "stop", 0, where)));
    return d;
  }
  if (type == "Sequence") {
    auto d = std::make_unique<SequenceDec>();
    const json* list = jf::find(j, "decoders");
    CT_CHECK(list && list->is_array(), where, ".decoders: expected a list");
    for (size_t i = 0; i < list->size(); ++i) {
      d->parts.push_back(make_decoder((*list)[i], str(where, ".decoders[", i, "]")));
    }
    return d;
  }
  jf::unsupported(
      where, "decoder", type,
      "ByteLevel, Metaspace, WordPiece, BPEDecoder, Replace, ByteFallback, Fuse, Strip, Sequence");
}

}  // namespace ct::text

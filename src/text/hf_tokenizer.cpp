#include "text/hf_tokenizer.h"

#include <filesystem>

#include "core/fs.h"
#include "text/decoders.h"
#include "text/json_fields.h"
#include "text/models.h"
#include "text/normalizers.h"
#include "text/post_processors.h"
#include "text/pre_tokenizers.h"
#include "text/unicode.h"

namespace ct::text {
namespace {

using nlohmann::json;

void check_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t len;
    if (decode_utf8(s.data() + i, s.size() - i, len) == kReplacementChar && len == 1) {
      fail("tokenizer: input text is not valid UTF-8 (byte ", i, " of ", s.size(), ")");
    }
    i += len;
  }
}

// HF's BytesToCharOffsetConverter: byte offsets into `s` to code-point offsets, unchanged when the start is
// past the end.
std::pair<uint32_t, uint32_t> to_chars(const std::vector<uint32_t>& char_at,
                                       std::pair<uint32_t, uint32_t> o) {
  const size_t n = char_at.size();
  if (o.first >= n) return o;
  if (o.second < n) return {char_at[o.first], char_at[o.second]};
  // HF: the char of the last byte, or start + 1 when even that is past the end.
  const uint32_t last = o.second >= 1 && o.second - 1 < n ? char_at[o.second - 1] : char_at[o.first] + 1;
  return {char_at[o.first], last + 1};
}

TruncationParams parse_truncation(const json& j, const std::string& where) {
  TruncationParams t;
  const int64_t ml = jf::get_int(j, "max_length", 512, where);
  const int64_t st = jf::get_int(j, "stride", 0, where);
  CT_CHECK(ml >= 0 && st >= 0, where, ": max_length and stride must be >= 0");
  t.max_length = static_cast<size_t>(ml);
  t.stride = static_cast<size_t>(st);
  const std::string s = jf::get_string(j, "strategy", "LongestFirst", where);
  if (s == "LongestFirst") {
    t.strategy = TruncationStrategy::kLongestFirst;
  } else if (s == "OnlyFirst") {
    t.strategy = TruncationStrategy::kOnlyFirst;
  } else if (s == "OnlySecond") {
    t.strategy = TruncationStrategy::kOnlySecond;
  } else {
    fail(where, ".strategy: '", s, "' is not one of LongestFirst, OnlyFirst, OnlySecond");
  }
  const std::string d = jf::get_string(j, "direction", "Right", where);
  CT_CHECK(d == "Right" || d == "Left", where, ".direction: '", d, "' is not Left or Right");
  t.left = d == "Left";
  return t;
}

PaddingParams parse_padding(const json& j, const std::string& where) {
  PaddingParams p;
  if (const json* s = jf::find(j, "strategy")) {
    if (s->is_object() && s->contains("Fixed")) {
      CT_CHECK((*s)["Fixed"].is_number_unsigned(), where, ".strategy.Fixed: expected a length");
      p.fixed = (*s)["Fixed"].get<size_t>();
    } else {
      CT_CHECK(s->is_string() && s->get<std::string>() == "BatchLongest", where,
               ".strategy: expected \"BatchLongest\" or {\"Fixed\": N}");
    }
  }
  const std::string d = jf::get_string(j, "direction", "Right", where);
  CT_CHECK(d == "Right" || d == "Left", where, ".direction: '", d, "' is not Left or Right");
  p.left = d == "Left";
  p.pad_to_multiple_of =
      static_cast<size_t>(std::max<int64_t>(0, jf::get_int(j, "pad_to_multiple_of", 0, where)));
  p.pad_id = static_cast<int32_t>(jf::get_int(j, "pad_id", 0, where));
  p.pad_type_id = static_cast<int32_t>(jf::get_int(j, "pad_type_id", 0, where));
  p.pad_token = jf::get_string(j, "pad_token", "[PAD]", where);
  return p;
}

}  // namespace

HfTokenizer::HfTokenizer() = default;
HfTokenizer::~HfTokenizer() = default;
HfTokenizer::HfTokenizer(HfTokenizer&&) noexcept = default;
HfTokenizer& HfTokenizer::operator=(HfTokenizer&&) noexcept = default;

HfTokenizer HfTokenizer::from_file(const std::string& path_in) {
  if (std::filesystem::is_directory(path_in)) return from_dir(path_in);
  const std::string& path = path_in;
  const std::string content = fs::read_file(path);
  json j;
  try {
    j = json::parse(content);
  } catch (const json::exception& e) {
    fail(path, ": malformed JSON (", e.what(), ")");
  }
  return from_json(j, path);
}

HfTokenizer HfTokenizer::from_json(const json& j, const std::string& source) {
  CT_CHECK(j.is_object(), source, ": expected a JSON object at the top level");
  HfTokenizer t;
  const std::string version = jf::get_string(j, "version", "1.0", source);
  CT_CHECK(version == "1.0", source, ": version '", version, "' is not supported (expected 1.0)");
  if (const json* n = jf::find(j, "normalizer")) t.normalizer_ = make_normalizer(*n, source + ": normalizer");
  if (const json* p = jf::find(j, "pre_tokenizer")) {
    t.pre_tokenizer_ = make_pre_tokenizer(*p, source + ": pre_tokenizer");
  }
  const json* m = jf::find(j, "model");
  CT_CHECK(m, source, ": model is missing");
  t.model_ = make_model(*m, source + ": model");
  if (const json* p = jf::find(j, "post_processor")) {
    t.post_processor_ = make_post_processor(*p, source + ": post_processor");
  }
  if (const json* d = jf::find(j, "decoder")) t.decoder_ = make_decoder(*d, source + ": decoder");
  if (const json* tr = jf::find(j, "truncation"))
    t.truncation_ = parse_truncation(*tr, source + ": truncation");
  if (const json* pd = jf::find(j, "padding")) t.padding_ = parse_padding(*pd, source + ": padding");

  std::vector<AddedToken> added;
  if (const json* a = jf::find(j, "added_tokens")) {
    CT_CHECK(a->is_array(), source, ": added_tokens: expected a list");
    // HF ignores the file's ids: an added token gets the model's id when the model knows it (or the id of an
    // earlier added token with the same content), else the next id after the vocab and the added tokens so
    // far.
    const auto vocab_size = static_cast<int32_t>(t.model_->vocab_size());
    int32_t max_added = -1;
    for (size_t i = 0; i < a->size(); ++i) {
      const json& e = (*a)[i];
      const std::string w = str(source, ": added_tokens[", i, "]");
      CT_CHECK(e.is_object(), w, ": expected an object");
      AddedToken tok;
      tok.content = jf::need_string(e, "content", w);
      jf::get_int(e, "id", -1, w);  // checked for its type only: HF assigns the ids itself (below)
      tok.single_word = jf::get_bool(e, "single_word", false, w);
      tok.lstrip = jf::get_bool(e, "lstrip", false, w);
      tok.rstrip = jf::get_bool(e, "rstrip", false, w);
      tok.normalized = jf::get_bool(e, "normalized", true, w);
      tok.special = jf::get_bool(e, "special", false, w);
      int32_t id = -1;
      for (const auto& a : added)
        if (a.content == tok.content) id = a.id;
      if (id < 0) id = t.model_->token_to_id(tok.content);
      if (id < 0) id = max_added >= vocab_size ? max_added + 1 : vocab_size;
      tok.id = id;
      max_added = std::max(max_added, id);
      added.push_back(std::move(tok));
    }
  }
  t.added_.build(std::move(added), t.normalizer_.get());
  t.source_ = std::make_shared<const json>(j);
  return t;
}

Encoding HfTokenizer::encode_sequence(std::string_view text, int32_t type_id, int32_t word,
                                      OffsetUnit unit) const {
  Encoding e;
  encode_sequence_into(e, text, type_id, word, unit);
  return e;
}

void HfTokenizer::encode_sequence_into(Encoding& e, std::string_view text, int32_t type_id, int32_t word,
                                       OffsetUnit unit) const {
  check_utf8(text);
  PreTokenized p;
  p.splits = added_.extract_and_normalize(text, normalizer_.get());
  if (pre_tokenizer_) pre_tokenizer_->pre_tokenize(p);
  std::vector<uint32_t> char_at;
  if (unit == OffsetUnit::kChar) {
    char_at.resize(text.size());
    uint32_t n = 0;
    for (size_t b = 0; b < text.size(); ++b) {
      if (b > 0 && (static_cast<unsigned char>(text[b]) & 0xC0) != 0x80) ++n;
      char_at[b] = n;
    }
  }
  std::vector<PieceToken> toks;
  for (size_t idx = 0; idx < p.splits.size(); ++idx) {
    Split& s = p.splits[idx];
    if (!s.tokenized) {
      toks.clear();
      model_->tokenize(s.text.get(), toks);
      s.tokens = std::move(toks);
      toks = {};
    }
    for (PieceToken& t : s.tokens) {
      std::pair<uint32_t, uint32_t> off{t.begin, t.end};
      if (t.begin < t.end) {
        auto [ob, oe] = s.text.to_original(t.begin, t.end);
        off = {static_cast<uint32_t>(ob + s.text.shift()), static_cast<uint32_t>(oe + s.text.shift())};
      }
      if (unit == OffsetUnit::kChar) off = to_chars(char_at, off);
      e.push(t.id, type_id, std::move(t.value), off, word >= 0 ? word : static_cast<int32_t>(idx), false);
    }
  }
}

Encoding HfTokenizer::finish(Encoding a, Encoding* b, bool add_special) const {
  if (truncation_) {
    TruncationParams p = *truncation_;
    const size_t n_added = add_special ? num_special_tokens_to_add(b != nullptr) : 0;
    if (n_added > 0) {
      CT_CHECK(p.max_length >= n_added, "truncation: max_length ", p.max_length, " is less than the ",
               n_added, " special tokens the post-processor adds");
      p.max_length -= n_added;
    }
    truncate_encodings(a, b, p);
  }
  Encoding out = post_process(post_processor_.get(), std::move(a), b, add_special);
  if (padding_) {
    std::vector<Encoding*> batch{&out};
    pad_encodings(batch, *padding_);
  }
  return out;
}

size_t HfTokenizer::num_special_tokens_to_add(bool pair) const {
  return post_processor_ ? post_processor_->added_tokens(pair) : 0;
}

Encoding HfTokenizer::encode(std::string_view text, bool add_special, OffsetUnit unit) const {
  return finish(encode_sequence(text, 0, -1, unit), nullptr, add_special);
}

Encoding HfTokenizer::encode_pair(std::string_view a, std::string_view b, bool add_special,
                                  OffsetUnit unit) const {
  Encoding eb = encode_sequence(b, 1, -1, unit);
  return finish(encode_sequence(a, 0, -1, unit), &eb, add_special);
}

Encoding HfTokenizer::encode_words(const std::vector<std::string>& words,
                                   const std::vector<std::string>* pair, bool add_special,
                                   OffsetUnit unit) const {
  // Each word appended in place: what Encoding::merge of one encoding per word gives (no overflow, offsets
  // kept relative to their word), without a set of vectors per word.
  auto one = [&](const std::vector<std::string>& ws, int32_t type_id) {
    Encoding e;
    for (size_t i = 0; i < ws.size(); ++i)
      encode_sequence_into(e, ws[i], type_id, static_cast<int32_t>(i), unit);
    return e;
  };
  if (!pair) return finish(one(words, 0), nullptr, add_special);
  Encoding eb = one(*pair, 1);
  return finish(one(words, 0), &eb, add_special);
}

int32_t HfTokenizer::token_to_id(std::string_view token) const {
  if (const AddedToken* a = added_.find(token)) return a->id;
  return model_->token_to_id(token);
}

std::string HfTokenizer::id_to_token(int32_t id) const {
  if (const AddedToken* a = added_.find(id)) return added_.shown(*a);
  const std::string* t = model_->id_to_token(id);
  return t ? *t : std::string();
}

size_t HfTokenizer::vocab_size() const {
  size_t n = model_->vocab_size();
  for (const auto& a : added_.tokens()) n = std::max(n, static_cast<size_t>(a.id) + 1);
  return n;
}

std::string HfTokenizer::decode(const std::vector<int32_t>& ids, bool skip_special) const {
  std::vector<std::string> tokens;
  for (int32_t id : ids) {
    if (const AddedToken* a = added_.find(id)) {
      if (skip_special && a->special) continue;
      tokens.push_back(added_.shown(*a));
      continue;
    }
    if (const std::string* t = model_->id_to_token(id)) tokens.push_back(*t);
  }
  if (!decoder_) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return out;
  }
  std::string out;
  for (auto& t : decoder_->decode_chain(std::move(tokens))) out += t;
  return out;
}

}  // namespace ct::text

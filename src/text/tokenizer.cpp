// Tokenizer core: building from a vocab, validation, and encode (added tokens, then normalize, pre-tokenize,
// WordPiece per word). Loading and saving folders lives in tokenizer_files.cpp.
#include "text/tokenizer.h"

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "text/bert_normalizer.h"
#include "text/pre_tokenizer.h"
#include "text/unicode.h"
#include "text/wordpiece.h"

namespace ct::text {
namespace {

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t len;
    if (decode_utf8(s.data() + i, s.size() - i, len) == kReplacementChar && len == 1) return false;
    i += len;
  }
  return true;
}

struct EncodeScratch {
  std::vector<NormChar> chars;
  std::vector<WordSpan> words;
  WordPieceScratch wordpiece;
};

}  // namespace

Tokenizer Tokenizer::from_vocab(std::vector<std::string> vocab, TokenizerOptions options) {
  Tokenizer t;
  t.vocab_ = std::move(vocab);
  t.options_ = std::move(options);
  t.finish("tokenizer vocab");
  return t;
}

void Tokenizer::finish(const std::string& source) {
  const auto& o = options_;
  CT_CHECK(o.max_input_chars_per_word > 0, source, ": max_input_chars_per_word must be > 0, got ",
           o.max_input_chars_per_word);
  CT_CHECK(o.model_max_length > 0, source, ": model_max_length must be > 0, got ", o.model_max_length);
  CT_CHECK(o.strip_accents >= -1 && o.strip_accents <= 1, source,
           ": strip_accents must be -1 (follow lower-case), 0 or 1, got ", o.strip_accents);
  CT_CHECK(!o.continuing_subword_prefix.empty(), source, ": continuing_subword_prefix is empty");
  CT_CHECK(vocab_.size() < static_cast<size_t>(std::numeric_limits<int32_t>::max()), source, ": vocab has ",
           vocab_.size(), " entries, more than int32 ids allow");
  for (size_t i = 0; i < vocab_.size(); ++i) {
    CT_CHECK(valid_utf8(vocab_[i]), source, ": vocab entry ", i, " is not valid UTF-8");
  }
  if (index_.empty()) {
    index_.reserve(vocab_.size());
    // A repeated token maps to its last line, as HF's load_vocab (a dict) and WordPiece::read_file (a
    // HashMap) do.
    for (size_t i = 0; i < vocab_.size(); ++i) index_.insert_or_assign(vocab_[i], static_cast<int32_t>(i));
  }

  std::string missing;
  auto resolve = [&](const char* name, const std::string& token, bool required) {
    const int32_t id = token.empty() ? -1 : token_to_id(token);
    if (id < 0 && required) missing += str(missing.empty() ? "" : ", ", name, " '", token, "'");
    return id;
  };
  unk_id_ = resolve("unk_token", o.unk_token, true);
  sep_id_ = resolve("sep_token", o.sep_token, true);
  pad_id_ = resolve("pad_token", o.pad_token, true);
  cls_id_ = resolve("cls_token", o.cls_token, true);
  mask_id_ = resolve("mask_token", o.mask_token, false);
  CT_CHECK(missing.empty(), source, ": vocab (", vocab_.size(), " tokens) lacks ", missing);

  // HF registers the special tokens as added tokens, so they are matched in raw text.
  for (const auto* token : {&o.pad_token, &o.unk_token, &o.cls_token, &o.sep_token, &o.mask_token}) {
    const int32_t id = token_to_id(*token);
    if (id < 0) continue;
    const bool known =
        std::any_of(added_.begin(), added_.end(), [&](const AddedToken& a) { return a.content == *token; });
    if (!known) added_.push_back({*token, id});
  }
  std::sort(added_.begin(), added_.end(),
            [](const AddedToken& a, const AddedToken& b) { return a.id < b.id; });
  added_first_.fill(false);
  for (const auto& a : added_) {
    CT_CHECK(!a.content.empty(), source, ": added token ", a.id, " is empty");
    added_first_[static_cast<unsigned char>(a.content[0])] = true;
  }
  std::vector<std::pair<std::string_view, int32_t>> entries(index_.begin(), index_.end());
  trie_.build(std::move(entries));
  continuation_root_ = trie_.walk(trie_.root(), o.continuing_subword_prefix);
}

int32_t Tokenizer::token_to_id(std::string_view token) const {
  auto it = index_.find(token);
  return it == index_.end() ? -1 : it->second;
}

std::vector<Token> Tokenizer::encode(std::string_view text) const {
  CT_CHECK(text.size() < static_cast<size_t>(std::numeric_limits<int32_t>::max()), "tokenizer: text of ",
           text.size(), " bytes is too long (limit 2 GiB)");
  std::vector<Token> out;
  out.reserve(text.size() / 4 + 8);
  if (added_.empty()) {
    encode_segment(text, 0, out);
    return out;
  }
  // Leftmost-longest match of the added tokens on the raw bytes (HF's added-token split), the rest goes
  // through the normal pipeline segment by segment.
  size_t seg = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (!added_first_[static_cast<unsigned char>(text[i])]) {
      ++i;
      continue;
    }
    const AddedToken* best = nullptr;
    for (const auto& a : added_) {
      if (text.compare(i, a.content.size(), a.content) == 0 &&
          (!best || a.content.size() > best->content.size()))
        best = &a;
    }
    if (!best) {
      ++i;
      continue;
    }
    if (seg < i) encode_segment(text.substr(seg, i - seg), static_cast<int32_t>(seg), out);
    out.push_back({best->id, static_cast<int32_t>(i), static_cast<int32_t>(i + best->content.size())});
    i += best->content.size();
    seg = i;
  }
  if (seg < text.size()) encode_segment(text.substr(seg), static_cast<int32_t>(seg), out);
  return out;
}

void Tokenizer::encode_segment(std::string_view text, int32_t base, std::vector<Token>& out) const {
  thread_local EncodeScratch s;
  s.chars.clear();
  BertNormalizer(options_.clean_text, options_.tokenize_chinese_chars, strips_accents(),
                 options_.do_lower_case)
      .normalize(text, base, s.chars);
  bert_pre_tokenize(s.chars, s.words);
  const WordPieceParams params{unk_id_, options_.max_input_chars_per_word, continuation_root_};
  for (const auto& w : s.words) {
    wordpiece_tokenize(trie_, params, s.chars.data() + w.first, w.last - w.first, s.wordpiece, out);
  }
}

}  // namespace ct::text

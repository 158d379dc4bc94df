// BERT WordPiece tokenizer, equal to HF's fast BertTokenizerFast on the same vocab: BertNormalizer (clean
// text, CJK padding, strip accents, lower-case), BertPreTokenizer, WordPiece. Offsets are byte offsets into
// the original UTF-8 text (HF gives code-point offsets; callers convert where they need to).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/vocab_trie.h"

namespace ct::text {

struct Token {
  int32_t id;
  int32_t begin;  // byte offset of the token's first character in the original text
  int32_t end;    // byte offset one past its last character
};

struct TokenizerOptions {
  bool do_lower_case = true;
  int strip_accents = -1;  // -1: follow do_lower_case (HF's strip_accents=None); 0: keep; 1: strip
  bool tokenize_chinese_chars = true;
  bool clean_text = true;
  int max_input_chars_per_word = 100;
  int64_t model_max_length = 512;
  // Special tokens and the WordPiece continuation prefix, by their HF names. mask_token may be absent from
  // the vocab; the other four must be present.
  std::string unk_token = "[UNK]";
  std::string sep_token = "[SEP]";
  std::string pad_token = "[PAD]";
  std::string cls_token = "[CLS]";
  std::string mask_token = "[MASK]";
  std::string continuing_subword_prefix = "##";
};

// An HF "added token": matched verbatim in the raw text before normalization and emitted as one token (so a
// literal "[SEP]" in a context becomes the SEP id, as in HF). The flags are kept for saving; matching is
// always exact and raw (the lstrip/rstrip/single_word/normalized=true variants are not applied).
struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool single_word = false, lstrip = false, rstrip = false, normalized = false, special = true;
};

// Hash that lets the vocab be searched with a string_view (no allocation per WordPiece probe).
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
using VocabIndex = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

class Tokenizer {
 public:
  // Loads tokenizer.json (WordPiece form; preferred, as in HF) or else vocab.txt from a model folder, then
  // applies tokenizer_config.json (do_lower_case, strip_accents, tokenize_chinese_chars, model_max_length,
  // special tokens, added_tokens_decoder) and special_tokens_map.json when present; a key they lack keeps the
  // value from tokenizer.json or HF's default. vocab.txt: id = line, trailing whitespace trimmed, a repeated
  // token maps to its last line. Throws ct::Error naming the file when it is missing, malformed, not
  // WordPiece/BertNormalizer/BertPreTokenizer, or lacks [CLS]/[SEP]/[UNK]/[PAD].
  static Tokenizer from_dir(const std::string& dir);
  static Tokenizer from_vocab(std::vector<std::string> vocab, TokenizerOptions options = {});

  // Tokens of `text`, each with its byte span in `text`; no [CLS]/[SEP] are added around it. As in HF,
  // special-token strings inside the text (a literal "[SEP]") are matched first and become those tokens.
  // Thread-safe.
  std::vector<Token> encode(std::string_view text) const;

  // Writes vocab.txt, tokenizer_config.json, special_tokens_map.json and tokenizer.json as HF saves them,
  // each atomically (temp + rename); creates `dir` if needed.
  void save(const std::string& dir) const;

  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t pad_id() const { return pad_id_; }
  int32_t unk_id() const { return unk_id_; }
  int32_t mask_id() const { return mask_id_; }  // -1 when the vocab has no mask token
  int64_t vocab_size() const { return static_cast<int64_t>(vocab_.size()); }
  const std::vector<std::string>& vocab() const { return vocab_; }
  const TokenizerOptions& options() const { return options_; }
  const std::vector<AddedToken>& added_tokens() const { return added_; }
  int32_t token_to_id(std::string_view token) const;  // -1 when absent
  bool strips_accents() const {
    return options_.strip_accents < 0 ? options_.do_lower_case : options_.strip_accents != 0;
  }

 private:
  // Builds the index when empty, resolves special ids, registers specials as added tokens and validates;
  // `source` names the file (or "tokenizer vocab") in error messages.
  void finish(const std::string& source);
  void encode_segment(std::string_view text, int32_t base, std::vector<Token>& out) const;

  std::vector<std::string> vocab_;
  VocabIndex index_;
  TokenizerOptions options_;
  int32_t cls_id_ = -1, sep_id_ = -1, pad_id_ = -1, unk_id_ = -1, mask_id_ = -1;
  std::vector<AddedToken> added_;        // sorted by id
  std::array<bool, 256> added_first_{};  // bytes that can start an added token
  VocabTrie trie_;                       // the vocab again, for WordPiece longest-match walks
  uint32_t continuation_root_ = VocabTrie::kNone;
};

}  // namespace ct::text

// BERT WordPiece tokenizer, equal to HF's fast BertTokenizerFast on the same vocab: BertNormalizer (clean text,
// CJK padding, strip accents, lower-case), BertPreTokenizer, WordPiece. Offsets are byte offsets into the
// original UTF-8 text (HF gives code-point offsets; callers convert where they need to).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

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
};

class Tokenizer {
 public:
  // Loads vocab.txt or the WordPiece tokenizer.json from a model folder, with tokenizer_config.json when present.
  // Throws ct::Error naming the file when it is missing, malformed, or lacks [CLS]/[SEP]/[UNK]/[PAD].
  static Tokenizer from_dir(const std::string& dir);
  static Tokenizer from_vocab(std::vector<std::string> vocab, TokenizerOptions options = {});

  // Tokens of `text` without special tokens, each with its byte span in `text`.
  std::vector<Token> encode(std::string_view text) const;

  // Writes vocab.txt, tokenizer_config.json and special_tokens_map.json (and tokenizer.json) as HF saves them.
  void save(const std::string& dir) const;

  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t pad_id() const { return pad_id_; }
  int32_t unk_id() const { return unk_id_; }
  int64_t vocab_size() const { return static_cast<int64_t>(vocab_.size()); }
  const std::vector<std::string>& vocab() const { return vocab_; }
  const TokenizerOptions& options() const { return options_; }
  int32_t token_to_id(std::string_view token) const;  // -1 when absent

 private:
  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int32_t> index_;
  TokenizerOptions options_;
  int32_t cls_id_ = -1, sep_id_ = -1, pad_id_ = -1, unk_id_ = -1;
};

}  // namespace ct::text

// A tokenizer.json pipeline, equal to HF's fast tokenizer (the Rust `tokenizers` crate, 0.22 semantics):
// added tokens, normalizer, pre-tokenizer, model, truncation with stride windows, post-processor, padding,
// decoder. Offsets are byte offsets into each input string, or code-point offsets (what Python and Node
// show) with OffsetUnit::kChar.
//
// Input text must be valid UTF-8: HF takes Rust &str, which cannot hold anything else, so there is no HF
// behaviour to copy; encode() throws ct::Error naming the first bad byte instead of guessing.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/added_tokens.h"
#include "text/encoding.h"

namespace ct::text {

class Normalizer;
class PreTokenizer;
class Model;
class PostProcessor;
class Decoder;

enum class OffsetUnit { kByte, kChar };

class HfTokenizer {
 public:
  HfTokenizer();
  ~HfTokenizer();
  HfTokenizer(HfTokenizer&&) noexcept;
  HfTokenizer& operator=(HfTokenizer&&) noexcept;

  // Reads a tokenizer.json file (or a folder holding one). Every unknown component or bad field is a one-line
  // ct::Error naming the file and the JSON path.
  static HfTokenizer from_file(const std::string& path);
  static HfTokenizer from_json(const nlohmann::json& j, const std::string& source);
  // A model folder: tokenizer.json, else vocab.json + merges.txt (GPT-2, RoBERTa), vocab.txt (BERT) or a
  // SentencePiece .model (XLM-R, DeBERTa-v2/v3, ALBERT, plain Unigram) converted as transformers converts
  // them; then tokenizer_config.json (+ special_tokens_map.json) applied as transformers' fast tokenizers
  // apply it (RoBERTa/GPT-2 add_prefix_space and trim_offsets, the mask token's lstrip, Llama/Gemma
  // add_bos_token and add_eos_token, added_tokens_decoder).
  // `overrides` (may be null) are keyword arguments as from_pretrained takes them (add_prefix_space=True, as
  // run_ner passes for RoBERTa/GPT-2); they win over tokenizer_config.json.
  static HfTokenizer from_dir(const std::string& dir, const nlohmann::json* overrides = nullptr);
  // Writes tokenizer.json (the pipeline as read, with the current truncation and padding) and the
  // tokenizer_config.json it was read with, atomically; HF loads the folder as the same tokenizer.
  void save(const std::string& dir) const;

  Encoding encode(std::string_view text, bool add_special_tokens = true,
                  OffsetUnit unit = OffsetUnit::kByte) const;
  Encoding encode_pair(std::string_view a, std::string_view b, bool add_special_tokens = true,
                       OffsetUnit unit = OffsetUnit::kByte) const;
  // Pre-split words (HF's is_split_into_words): each word is encoded alone, word id = its index, offsets
  // relative to the word.
  Encoding encode_words(const std::vector<std::string>& words, const std::vector<std::string>* pair_words,
                        bool add_special_tokens = true, OffsetUnit unit = OffsetUnit::kByte) const;
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = true) const;

  void set_truncation(std::optional<TruncationParams> t) { truncation_ = std::move(t); }
  void set_padding(std::optional<PaddingParams> p) { padding_ = std::move(p); }
  const std::optional<TruncationParams>& truncation() const { return truncation_; }
  const std::optional<PaddingParams>& padding() const { return padding_; }

  int32_t token_to_id(std::string_view token) const;  // -1 when absent
  std::string id_to_token(int32_t id) const;          // "" when absent
  size_t vocab_size() const;                          // model vocab plus added tokens beyond it
  const AddedVocabulary& added() const { return added_; }
  size_t num_special_tokens_to_add(bool pair) const;
  // The tokenizer.json and tokenizer_config.json it was read with (null when built otherwise): its identity
  // for caches, and the transformers-side settings (model_max_length, special tokens).
  const nlohmann::json* source() const { return source_.get(); }
  const nlohmann::json* config() const { return config_.get(); }
  // The padding a transformers tokenizer call applies (PreTrainedTokenizerFast.set_truncation_and_padding):
  // the pad token of tokenizer_config.json / special_tokens_map.json, else the one of tokenizer.json's
  // `padding` section (transformers takes the section only as a default), with its id looked up in the
  // vocabulary; pad_token_type_id and padding_side the same way, config first. `fixed` is left 0 for the
  // caller. nullopt when there is no pad token, where transformers refuses to pad; pad_id -1 when the pad
  // token is not in the vocabulary (transformers would add it as a new token).
  std::optional<PaddingParams> call_padding() const;
  // tokenizer.pad_token_id: call_padding()'s id, else the first of <pad>, [PAD], <|endoftext|> in the
  // vocabulary, else 0 (the training commands' fallback for tokenizers that name no pad token).
  int32_t pad_token_id() const;
  // tokenizer_config.json's model_max_length; 0 when absent or "no limit" (1e30, VERY_LARGE_INTEGER).
  int64_t model_max_length() const;

 private:
  Encoding encode_sequence(std::string_view text, int32_t type_id, int32_t word, OffsetUnit unit) const;
  // encode_sequence's tokens appended to `e`.
  void encode_sequence_into(Encoding& e, std::string_view text, int32_t type_id, int32_t word,
                            OffsetUnit unit) const;
  Encoding finish(Encoding a, Encoding* b, bool add_special_tokens) const;

  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<PostProcessor> post_processor_;
  std::unique_ptr<Decoder> decoder_;
  AddedVocabulary added_;
  std::optional<TruncationParams> truncation_;
  std::optional<PaddingParams> padding_;
  std::shared_ptr<const nlohmann::json> source_, config_;  // for save()
};

}  // namespace ct::text

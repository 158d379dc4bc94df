// The tokenizer of `coretrain qa`: BERT-family WordPiece folders (bert, distilbert, electra) through the BERT
// tokenizer (text/tokenizer.h, the fast path), every other model type through the tokenizer.json engine
// (text/hf_tokenizer.h: RoBERTa's byte-level BPE, XLM-R's and CamemBERT's SentencePiece Unigram, ...), each
// building run_qa's features, keying the feature cache and saving its files as save_pretrained does.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "tasks/question_answering/qa_features.h"
#include "tasks/question_answering/squad.h"
#include "text/hf_tokenizer.h"
#include "text/tokenizer.h"

namespace ct::tasks {

class QaTokenizer {
 public:
  // A model folder's tokenizer for a config.json `model_type`. Throws ct::Error naming the folder's problem.
  static QaTokenizer from_dir(const std::string& dir, const std::string& model_type);
  QaTokenizer() = default;
  explicit QaTokenizer(text::Tokenizer t);
  // `token_type_ids` false: the model gets none (RoBERTa's model_input_names); `pad_id` pads the rows.
  QaTokenizer(text::HfTokenizer t, int32_t pad_id, bool token_type_ids);

  FeatureSet build_features(const std::vector<Example>& examples, const FeatureOptions& options) const;
  // Identity for the feature cache key: the kind and everything that shapes the tokens.
  uint64_t fingerprint() const;
  // tokenizer_config.json's model_max_length; 0 when it sets none (HF's VERY_LARGE_INTEGER).
  int64_t model_max_length() const;
  int64_t vocab_size() const;
  void save(const std::string& dir) const;
  // "wordpiece" (the BERT tokenizer) or "tokenizer.json".
  const char* kind() const;

 private:
  std::variant<text::Tokenizer, text::HfTokenizer> tok_;
  int32_t pad_id_ = 0;
  bool token_type_ids_ = true;
};

}  // namespace ct::tasks

#include "tasks/question_answering/qa_tokenizer.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/hash.h"
#include "data/feature_cache.h"

namespace ct::tasks {
namespace {

bool bert_family(const std::string& model_type) {
  return model_type == "bert" || model_type == "distilbert" || model_type == "electra";
}

}  // namespace

QaTokenizer::QaTokenizer(text::Tokenizer t) : tok_(std::move(t)) {}

QaTokenizer::QaTokenizer(text::HfTokenizer t, int32_t pad_id, bool token_type_ids)
    : tok_(std::move(t)), pad_id_(pad_id), token_type_ids_(token_type_ids) {}

QaTokenizer QaTokenizer::from_dir(const std::string& dir, const std::string& model_type) {
  if (bert_family(model_type)) {
    try {
      return QaTokenizer(text::Tokenizer::from_dir(dir));
    } catch (const Error&) {
      // Not BERT's WordPiece shape (another normalizer or pre-tokenizer): the general engine below.
    }
  }
  text::HfTokenizer t = text::HfTokenizer::from_dir(dir);
  // Windows and padding are cut by the features; what tokenizer.json sets is dropped, as run_qa's explicit
  // truncation/padding arguments override it.
  t.set_truncation(std::nullopt);
  t.set_padding(std::nullopt);
  // transformers' RobertaTokenizerFast, XLMRobertaTokenizerFast, CamembertTokenizerFast and the like give the
  // model no token_type_ids (model_input_names); tokenizer_config.json may say so explicitly too.
  bool types = !(model_type == "roberta" || model_type == "xlm-roberta" || model_type == "camembert");
  if (const auto* c = t.config();
      c && c->is_object() && c->contains("model_input_names") && (*c)["model_input_names"].is_array()) {
    types = false;
    for (const auto& n : (*c)["model_input_names"])
      if (n == "token_type_ids") types = true;
  }
  if (const auto* c = t.config(); c && c->is_object() && c->value("padding_side", "right") == "left")
    fail(dir,
         "/tokenizer_config.json: padding_side \"left\" (run_qa's context-first features, XLNet) is not "
         "supported by coretrain qa");
  const int32_t pad = t.pad_token_id();
  return QaTokenizer(std::move(t), pad, types);
}

FeatureSet QaTokenizer::build_features(const std::vector<Example>& examples,
                                       const FeatureOptions& options) const {
  if (const auto* b = std::get_if<text::Tokenizer>(&tok_)) return FeatureSet::build(examples, *b, options);
  return FeatureSet::build(examples, std::get<text::HfTokenizer>(tok_), options, pad_id_, token_type_ids_);
}

uint64_t QaTokenizer::fingerprint() const {
  if (const auto* b = std::get_if<text::Tokenizer>(&tok_)) return data::tokenizer_fingerprint(*b);
  Hasher h;
  h.u64(data::tokenizer_fingerprint(std::get<text::HfTokenizer>(tok_)));
  h.u64(static_cast<uint64_t>(pad_id_)).u64(token_type_ids_);
  return h.digest();
}

int64_t QaTokenizer::model_max_length() const {
  if (const auto* b = std::get_if<text::Tokenizer>(&tok_)) return b->options().model_max_length;
  return std::get<text::HfTokenizer>(tok_).model_max_length();
}

int64_t QaTokenizer::vocab_size() const {
  if (const auto* b = std::get_if<text::Tokenizer>(&tok_)) return b->vocab_size();
  return static_cast<int64_t>(std::get<text::HfTokenizer>(tok_).vocab_size());
}

void QaTokenizer::save(const std::string& dir) const {
  std::visit([&](const auto& t) { t.save(dir); }, tok_);
}

const char* QaTokenizer::kind() const {
  return std::holds_alternative<text::Tokenizer>(tok_) ? "wordpiece" : "tokenizer.json";
}

}  // namespace ct::tasks

// tokenizer.json models: each turns one pre-tokenized word into tokens with byte offsets inside it.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "text/pre_tokenized.h"
#include "text/tokenizer.h"

namespace ct::text {

class Model {
 public:
  virtual ~Model() = default;
  // Appends the tokens of `word` (offsets relative to it). Thread-safe.
  virtual void tokenize(std::string_view word, std::vector<PieceToken>& out) const = 0;
  virtual int32_t token_to_id(std::string_view token) const = 0;  // -1 when absent
  virtual const std::string* id_to_token(int32_t id) const = 0;   // nullptr when absent
  virtual size_t vocab_size() const = 0;
};

std::unique_ptr<Model> make_model(const nlohmann::json& j, const std::string& where);
std::unique_ptr<Model> make_bpe(const nlohmann::json& j, const std::string& where);
std::unique_ptr<Model> make_unigram(const nlohmann::json& j, const std::string& where);
std::unique_ptr<Model> make_wordpiece(const nlohmann::json& j, const std::string& where);
std::unique_ptr<Model> make_wordlevel(const nlohmann::json& j, const std::string& where);

// A {token: id} vocab and its reverse.
struct Vocab {
  VocabIndex index;
  std::vector<std::string> by_id;  // "" where no token has that id
  void read(const nlohmann::json& j, const std::string& where);
  int32_t find(std::string_view t) const {
    auto it = index.find(t);
    return it == index.end() ? -1 : it->second;
  }
  const std::string* at(int32_t id) const {
    return id >= 0 && static_cast<size_t>(id) < by_id.size() && has_[static_cast<size_t>(id)]
               ? &by_id[static_cast<size_t>(id)]
               : nullptr;
  }

 private:
  std::vector<bool> has_;
};

}  // namespace ct::text

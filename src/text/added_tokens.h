// HF's added vocabulary: tokens cut out of the text before the model sees it, leftmost-longest, with the
// single_word / lstrip / rstrip rules; `normalized` tokens are matched after normalization.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/pre_tokenized.h"
#include "text/tokenizer.h"

namespace ct::text {

class Normalizer;

class AddedVocabulary {
 public:
  // `tokens` in file order; `normalizer` (may be null) gives the match form of normalized tokens.
  void build(std::vector<AddedToken> tokens, const Normalizer* normalizer);
  const std::vector<AddedToken>& tokens() const { return tokens_; }
  const AddedToken* find(std::string_view content) const;
  const AddedToken* find(int32_t id) const;
  // What decode and id_to_token show for `id`: the normalized form of a `normalized` token, as HF's
  // simple_id_to_token.
  std::string shown(const AddedToken& t) const;

  // Splits `text` into added-token splits (tokenized) and normalized splits (not yet tokenized).
  std::vector<Split> extract_and_normalize(std::string_view text, const Normalizer* normalizer) const;

 private:
  struct MatchSet {
    std::vector<std::pair<std::string, size_t>> entries;   // (pattern, index into tokens_)
    std::array<std::vector<size_t>, 256> by_first_byte{};  // entries, longest first
    bool empty() const { return entries.empty(); }
  };
  void index(MatchSet& set) const;
  std::vector<Split> split(NormalizedString s, const MatchSet& set) const;

  std::vector<AddedToken> tokens_;
  std::vector<std::string> normalized_forms_;  // per token, "" when it shows its content
  MatchSet raw_, normalized_;
};

}  // namespace ct::text

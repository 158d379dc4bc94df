// HF BertPreTokenizer over normalized characters: whitespace (Rust char::is_whitespace) separates words and
// is dropped; every punctuation character (ASCII punctuation or Unicode P*) becomes a word of its own.
#pragma once

#include <cstdint>
#include <vector>

#include "text/bert_normalizer.h"

namespace ct::text {

struct WordSpan {
  uint32_t first;  // [first, last) indexes into the normalized characters
  uint32_t last;
};

// Replaces `words` with the words of `chars`.
void bert_pre_tokenize(const std::vector<NormChar>& chars, std::vector<WordSpan>& words);

}  // namespace ct::text

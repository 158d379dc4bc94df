// HF WordPiece model for one pre-tokenized word: greedy longest-match-first with a continuation prefix; a
// word longer than max_input_chars_per_word, or with any piece not in the vocab, becomes a single unk token.
#pragma once

#include <string>
#include <vector>

#include "text/bert_normalizer.h"
#include "text/tokenizer.h"
#include "text/vocab_trie.h"

namespace ct::text {

struct WordPieceParams {
  int32_t unk_id;
  int max_input_chars_per_word;
  uint32_t continuation_root;  // trie node after continuing_subword_prefix ("##"), or VocabTrie::kNone
};

// Reusable buffers so tokenizing a word allocates nothing once warm.
struct WordPieceScratch {
  std::string word;
  std::vector<uint32_t> pos;
};

// Appends the tokens of the word chars[0..n) (n > 0), each spanning the original bytes of its characters.
void wordpiece_tokenize(const VocabTrie& vocab, const WordPieceParams& params, const NormChar* chars,
                        size_t n, WordPieceScratch& scratch, std::vector<Token>& out);

}  // namespace ct::text

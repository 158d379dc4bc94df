// The --demo commands' vocabulary: every whole word of the generated texts, so a WordPiece tokenizer built
// from it never splits a word of theirs.
#pragma once

#include <string>
#include <vector>

namespace ct::tasks {

// Whole-word vocabulary of `texts` as an uncased BERT tokenizer splits and normalizes them (whitespace and
// punctuation split, accents stripped, lower-cased), after [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4, sorted.
std::vector<std::string> build_word_vocab(const std::vector<std::string>& texts);

}  // namespace ct::tasks

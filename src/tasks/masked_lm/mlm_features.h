// run_mlm.py's tokenization of a split, what both `coretrain mlm` and `coretrain bench tokenize --task mlm`
// run: by default every text through tokenizer(texts, return_special_tokens_mask=True) with neither
// truncation nor padding (the call's own settings, whatever tokenizer.json stored), then group_texts'
// max_seq_length chunks per map batch of 1,000 texts; with --line_by_line one chunk per non-blank line,
// truncated at max_seq_length (padding is the split's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tasks/group_texts.h"
#include "text/hf_tokenizer.h"

namespace ct::tasks {

// Tokenizes in parallel; the chunks are the same at any thread count. The tokenizer's truncation and padding
// are changed for the call and restored afterwards. Fails naming the text when one is not valid UTF-8.
std::vector<TokenChunk> build_mlm_chunks(text::HfTokenizer& tokenizer, const std::vector<std::string>& texts,
                                         bool line_by_line, int64_t max_seq_length);

// tokenizer(texts) with the tokenizer's special tokens and neither truncation nor padding, in parallel, what
// group_texts takes (run_mlm's and run_clm's tokenize_function). Fails naming the text when one is not valid
// UTF-8.
std::vector<TokenizedText> tokenize_plain(text::HfTokenizer& tokenizer,
                                          const std::vector<std::string>& texts);

// Python's str.isspace() over UTF-8: true for a non-empty string of whitespace code points only (run_mlm's
// line_by_line drops such lines).
bool is_python_space(const std::string& s);

}  // namespace ct::tasks

// WordPiece over a word of normalized characters; see wordpiece.h. HF probes word[start:end] (with "##" after
// the first piece) for end from the word's end down to start+1 and takes the first hit; walking the trie from
// `start` and remembering the last node that ends a token on a character boundary gives that same longest
// hit.
#include "text/wordpiece.h"

#include "text/unicode.h"

namespace ct::text {

void wordpiece_tokenize(const VocabTrie& vocab, const WordPieceParams& params, const NormChar* chars,
                        size_t n, WordPieceScratch& s, std::vector<Token>& out) {
  const Token unk{params.unk_id, chars[0].begin, chars[n - 1].end};
  if (n > static_cast<size_t>(params.max_input_chars_per_word)) {
    out.push_back(unk);
    return;
  }
  s.word.clear();
  s.pos.resize(n + 1);
  for (size_t k = 0; k < n; ++k) {
    s.pos[k] = static_cast<uint32_t>(s.word.size());
    if (chars[k].cp < 0x80) {
      s.word.push_back(static_cast<char>(chars[k].cp));
    } else {
      append_utf8(s.word, chars[k].cp);
    }
  }
  s.pos[n] = static_cast<uint32_t>(s.word.size());

  const size_t mark = out.size();
  size_t start = 0;
  while (start < n) {
    uint32_t node = start == 0 ? vocab.root() : params.continuation_root;
    size_t best_end = start;
    int32_t best_id = -1;
    for (size_t k = start; k < n && node != VocabTrie::kNone; ++k) {
      for (uint32_t b = s.pos[k]; b < s.pos[k + 1] && node != VocabTrie::kNone; ++b) {
        node = vocab.child(node, static_cast<uint8_t>(s.word[b]));
      }
      if (node != VocabTrie::kNone && vocab.id(node) >= 0) {
        best_end = k + 1;
        best_id = vocab.id(node);
      }
    }
    if (best_id < 0) {
      out.resize(mark);
      out.push_back(unk);
      return;
    }
    out.push_back({best_id, chars[start].begin, chars[best_end - 1].end});
    start = best_end;
  }
}

}  // namespace ct::text

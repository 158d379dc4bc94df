// WordPiece over a word of normalized characters; see wordpiece.h.
#include "text/wordpiece.h"

#include "text/unicode.h"

namespace ct::text {

void wordpiece_tokenize(const VocabIndex& vocab, const WordPieceParams& params, const NormChar* chars,
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
    // Probes are prefixes of `base`: the rest of the word, behind the continuation prefix after the first
    // piece.
    std::string_view base = s.word;
    size_t plen = 0;
    if (start > 0) {
      s.key.assign(params.prefix);
      s.key.append(s.word, s.pos[start], std::string::npos);
      base = s.key;
      plen = params.prefix.size();
    }
    size_t end = n;
    while (end > start && plen + (s.pos[end] - s.pos[start]) > params.max_token_bytes) --end;
    int32_t id = -1;
    for (; end > start; --end) {
      auto it = vocab.find(base.substr(0, plen + (s.pos[end] - s.pos[start])));
      if (it != vocab.end()) {
        id = it->second;
        break;
      }
    }
    if (id < 0) {
      out.resize(mark);
      out.push_back(unk);
      return;
    }
    out.push_back({id, chars[start].begin, chars[end - 1].end});
    start = end;
  }
}

}  // namespace ct::text

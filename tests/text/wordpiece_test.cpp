// The trie-walk WordPiece against a direct transcription of HF's loop (probe word[start:end], "##"-prefixed
// after the first piece, for end from the word's end down to start + 1; any failure -> one [UNK] for the
// word) on random words and vocabs, multi-byte characters included.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "text/tokenizer.h"

namespace ct::text {
namespace {

struct Piece {
  int32_t id, begin, end;
  bool operator==(const Piece&) const = default;
};

std::vector<Piece> reference(const std::unordered_map<std::string, int32_t>& vocab, const std::string& word,
                             const std::vector<size_t>& char_starts, int32_t unk) {
  std::vector<Piece> out;
  size_t start = 0;
  while (start < word.size()) {
    size_t end = word.size();
    int32_t id = -1;
    while (start < end) {
      const std::string probe = (start > 0 ? "##" : "") + word.substr(start, end - start);
      if (auto it = vocab.find(probe); it != vocab.end()) {
        id = it->second;
        break;
      }
      // step back one character
      size_t prev = 0;
      for (size_t b : char_starts) {
        if (b < end) prev = b;
      }
      end = prev;
    }
    if (id < 0) return {{unk, 0, static_cast<int32_t>(word.size())}};
    out.push_back({id, static_cast<int32_t>(start), static_cast<int32_t>(end)});
    start = end;
  }
  return out;
}

TEST(WordPiece, TrieWalkEqualsHfProbeLoop) {
  std::mt19937 rng(7);
  // é is 2 bytes; 一一 is two 3-byte characters in one alphabet entry.
  const std::vector<std::string> alphabet = {"a", "b", "c", "\xC3\xA9", "\xE4\xB8\x80\xE4\xB8\x80"};
  TokenizerOptions o;
  o.do_lower_case = false;
  o.tokenize_chinese_chars = false;  // keep multi-byte ideographs inside words
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]"};
    std::set<std::string> seen(vocab.begin(), vocab.end());
    const int size = 5 + static_cast<int>(rng() % 40);
    while (static_cast<int>(vocab.size()) < size) {
      std::string t = rng() % 2 ? "##" : "";
      const int len = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < len; ++k) t += alphabet[rng() % alphabet.size()];
      if (seen.insert(t).second) vocab.push_back(t);
    }
    std::unordered_map<std::string, int32_t> map;
    for (size_t i = 0; i < vocab.size(); ++i) map[vocab[i]] = static_cast<int32_t>(i);
    auto tok = Tokenizer::from_vocab(vocab, o);
    for (int w = 0; w < 200; ++w) {
      std::string word;
      std::vector<size_t> starts;
      const int len = 1 + static_cast<int>(rng() % 10);
      for (int k = 0; k < len; ++k) {
        const std::string& ch = alphabet[rng() % alphabet.size()];
        // a 2-ideograph entry is two characters
        for (size_t b = 0; b < ch.size();) {
          starts.push_back(word.size() + b);
          b += (static_cast<unsigned char>(ch[b]) >= 0xE0)
                   ? 3
                   : (static_cast<unsigned char>(ch[b]) >= 0xC0 ? 2 : 1);
        }
        word += ch;
      }
      std::vector<Piece> got;
      for (const Token& t : tok.encode(word)) got.push_back({t.id, t.begin, t.end});
      EXPECT_EQ(got, reference(map, word, starts, tok.unk_id())) << "trial " << trial << " word " << word;
    }
  }
}

}  // namespace
}  // namespace ct::text

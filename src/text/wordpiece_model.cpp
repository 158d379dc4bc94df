// WordPiece (greedy longest match from the left, whole word unknown if any part is) and WordLevel (whole
// word lookup) as tokenizer.json models.
#include "text/json_fields.h"
#include "text/models.h"
#include "text/unicode.h"
#include "text/vocab_trie.h"

namespace ct::text {
namespace {

using nlohmann::json;

class WordPieceModel : public Model {
 public:
  Vocab vocab;
  std::string unk_token, prefix;
  size_t max_chars = 100;
  // Over the vocab, so the longest entry at a position is one walk (wordpiece_tokenize's approach,
  // vocab_trie.h) instead of HF's hash probe per candidate end; the answer is the same.
  VocabTrie trie;
  uint32_t continuation_root = VocabTrie::kNone;  // the node after `prefix`

  void build_trie() {
    std::vector<std::pair<std::string_view, int32_t>> entries(vocab.index.begin(), vocab.index.end());
    trie.build(std::move(entries));
    continuation_root = trie.walk(trie.root(), prefix);
  }

  void tokenize(std::string_view word, std::vector<PieceToken>& out) const override {
    size_t chars = 0;
    for (char c : word) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    const auto n = static_cast<uint32_t>(word.size());
    auto unk = [&] {
      const int32_t id = vocab.find(unk_token);
      CT_CHECK(id >= 0, "WordPiece: unk_token '", unk_token, "' is not in the vocab");
      out.push_back({id, unk_token, 0, n});
    };
    if (chars > max_chars) return unk();
    const size_t first = out.size();
    size_t start = 0;
    while (start < word.size()) {
      // HF probes prefix + word[start, end) for end from the word's end down, one character at a time, and
      // takes the first hit: the longest entry ending on a character boundary, which the walk remembers.
      uint32_t node = start > 0 ? continuation_root : trie.root();
      int32_t found = -1;
      size_t end = start;
      for (size_t k = start; k < word.size() && node != VocabTrie::kNone; ++k) {
        node = trie.child(node, static_cast<uint8_t>(word[k]));
        if (node == VocabTrie::kNone) break;
        const bool boundary =
            k + 1 == word.size() || (static_cast<unsigned char>(word[k + 1]) & 0xC0) != 0x80;
        if (boundary && trie.id(node) >= 0) {
          found = trie.id(node);
          end = k + 1;
        }
      }
      if (found < 0) {
        out.resize(first);
        return unk();
      }
      std::string sub = start > 0 ? prefix : std::string();
      sub.append(word.substr(start, end - start));
      out.push_back({found, std::move(sub), static_cast<uint32_t>(start), static_cast<uint32_t>(end)});
      start = end;
    }
  }
  int32_t token_to_id(std::string_view t) const override { return vocab.find(t); }
  const std::string* id_to_token(int32_t id) const override { return vocab.at(id); }
  size_t vocab_size() const override { return vocab.index.size(); }
};

class WordLevelModel : public Model {
 public:
  Vocab vocab;
  std::string unk_token;
  void tokenize(std::string_view word, std::vector<PieceToken>& out) const override {
    int32_t id = vocab.find(word);
    if (id >= 0) {
      out.push_back({id, std::string(word), 0, static_cast<uint32_t>(word.size())});
      return;
    }
    id = vocab.find(unk_token);
    CT_CHECK(id >= 0, "WordLevel: unk_token '", unk_token, "' is not in the vocab");
    out.push_back({id, unk_token, 0, static_cast<uint32_t>(word.size())});
  }
  int32_t token_to_id(std::string_view t) const override { return vocab.find(t); }
  const std::string* id_to_token(int32_t id) const override { return vocab.at(id); }
  size_t vocab_size() const override { return vocab.index.size(); }
};

}  // namespace

std::unique_ptr<Model> make_wordpiece(const json& j, const std::string& where) {
  auto m = std::make_unique<WordPieceModel>();
  const json* v = jf::find(j, "vocab");
  CT_CHECK(v, where, ".vocab: missing");
  m->vocab.read(*v, where + ".vocab");
  m->unk_token = jf::get_string(j, "unk_token", "[UNK]", where);
  m->prefix = jf::get_string(j, "continuing_subword_prefix", "##", where);
  const int64_t mc = jf::get_int(j, "max_input_chars_per_word", 100, where);
  CT_CHECK(mc > 0, where, ".max_input_chars_per_word: must be > 0, got ", mc);
  m->max_chars = static_cast<size_t>(mc);
  m->build_trie();
  return m;
}

std::unique_ptr<Model> make_wordlevel(const json& j, const std::string& where) {
  auto m = std::make_unique<WordLevelModel>();
  const json* v = jf::find(j, "vocab");
  CT_CHECK(v, where, ".vocab: missing");
  m->vocab.read(*v, where + ".vocab");
  m->unk_token = jf::get_string(j, "unk_token", "<unk>", where);
  return m;
}

}  // namespace ct::text

// HF's BPE model: characters (with prefix/suffix, byte fallback, unk fusing) merged lowest rank first,
// leftmost on ties.
#include <atomic>
#include <cstdio>
#include <queue>
#include <unordered_map>

#include "text/json_fields.h"
#include "text/models.h"
#include "text/unicode.h"

namespace ct::text {
namespace {

using nlohmann::json;

struct PairHash {
  size_t operator()(uint64_t k) const noexcept { return std::hash<uint64_t>{}(k * 0x9E3779B97F4A7C15ull); }
};

uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

class Bpe : public Model {
 public:
  Vocab vocab;
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>, PairHash> merges;  // (a, b) -> (rank, new id)
  std::string unk_token, prefix, suffix;
  bool has_unk = false, has_prefix = false, has_suffix = false;
  bool fuse_unk = false, byte_fallback = false, ignore_merges = false;
  int32_t byte_ids[256];

  void tokenize(std::string_view word, std::vector<PieceToken>& out) const override;
  void merge_word(std::string_view word, std::vector<PieceToken>& out) const;
  // Identifies this model's entries in the per-thread word cache (an address could be reused by a later
  // model).
  const uint64_t cache_key = next_key.fetch_add(1);
  static inline std::atomic<uint64_t> next_key{1};
  int32_t token_to_id(std::string_view t) const override { return vocab.find(t); }
  const std::string* id_to_token(int32_t id) const override { return vocab.at(id); }
  size_t vocab_size() const override { return vocab.index.size(); }
};

struct Symbol {
  int32_t id;
  int32_t prev, next;
  uint32_t len;
};

struct Candidate {
  int32_t rank;
  int32_t pos;
  int32_t new_id;
  bool operator<(const Candidate& o) const {  // priority_queue pops the largest: lowest rank, then leftmost
    return rank != o.rank ? rank > o.rank : pos > o.pos;
  }
};

void Bpe::tokenize(std::string_view word, std::vector<PieceToken>& out) const {
  if (word.empty()) return;
  if (ignore_merges) {
    const int32_t id = vocab.find(word);
    if (id >= 0) {
      out.push_back({id, std::string(word), 0, static_cast<uint32_t>(word.size())});
      return;
    }
  }
  merge_word(word, out);
}

// Words repeat, so their merges are cached per thread, as HF does (same bounds: words under 256 bytes, 10,000
// words); a cached result is the one merging would give.
struct WordCache {
  uint64_t owner = 0;
  std::unordered_map<std::string, std::vector<PieceToken>> words;
};

void Bpe::merge_word(std::string_view word, std::vector<PieceToken>& out) const {
  thread_local WordCache cache;
  const bool cacheable = word.size() < 256;
  if (cacheable) {
    if (cache.owner != cache_key) {
      cache.words.clear();
      cache.owner = cache_key;
    }
    auto it = cache.words.find(std::string(word));
    if (it != cache.words.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t first = out.size();
  thread_local std::vector<Symbol> syms;
  syms.clear();
  auto add = [&](int32_t id, uint32_t len) {
    const auto n = static_cast<int32_t>(syms.size());
    if (n > 0) syms.back().next = n;
    syms.push_back({id, n - 1, -1, len});
  };
  bool unk_pending = false;
  int32_t unk_id = -1;
  uint32_t unk_len = 0;
  std::string s;
  size_t i = 0;
  while (i < word.size()) {
    size_t len;
    decode_utf8(word.data() + i, word.size() - i, len);
    const bool first = i == 0, last = i + len == word.size();
    s.clear();
    if (!first && has_prefix) s += prefix;
    s.append(word.substr(i, len));
    if (last && has_suffix) s += suffix;
    const int32_t id = vocab.find(s);
    if (id >= 0) {
      if (unk_pending) {
        add(unk_id, unk_len);
        unk_pending = false;
      }
      add(id, static_cast<uint32_t>(len));
    } else {
      bool done = false;
      if (byte_fallback) {
        bool all = true;
        for (char c : s) all = all && byte_ids[static_cast<unsigned char>(c)] >= 0;
        if (all) {
          for (char c : s) add(byte_ids[static_cast<unsigned char>(c)], 1);
          done = true;
        }
      }
      if (!done && has_unk) {
        const int32_t uid = vocab.find(unk_token);
        if (unk_pending && fuse_unk) {
          unk_len += static_cast<uint32_t>(len);
        } else {
          if (unk_pending) add(unk_id, unk_len);
          unk_pending = true;
          unk_id = uid;
          unk_len = static_cast<uint32_t>(len);
        }
      }
    }
    i += len;
  }
  if (unk_pending) add(unk_id, unk_len);

  std::priority_queue<Candidate> queue;
  for (size_t k = 0; k + 1 < syms.size(); ++k) {
    auto it = merges.find(pair_key(syms[k].id, syms[k + 1].id));
    if (it != merges.end()) queue.push({it->second.first, static_cast<int32_t>(k), it->second.second});
  }
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& cur = syms[static_cast<size_t>(top.pos)];
    if (cur.len == 0 || cur.next < 0) continue;
    const Symbol right = syms[static_cast<size_t>(cur.next)];
    auto it = merges.find(pair_key(cur.id, right.id));
    if (it == merges.end() || it->second.second != top.new_id) continue;
    syms[static_cast<size_t>(cur.next)].len = 0;
    cur.id = top.new_id;
    cur.len += right.len;
    cur.next = right.next;
    if (right.next >= 0) syms[static_cast<size_t>(right.next)].prev = top.pos;
    if (cur.prev >= 0) {
      auto p = merges.find(pair_key(syms[static_cast<size_t>(cur.prev)].id, cur.id));
      if (p != merges.end()) queue.push({p->second.first, cur.prev, p->second.second});
    }
    if (cur.next >= 0) {
      auto n = merges.find(pair_key(cur.id, syms[static_cast<size_t>(cur.next)].id));
      if (n != merges.end()) queue.push({n->second.first, top.pos, n->second.second});
    }
  }
  uint32_t off = 0;
  for (const Symbol& sym : syms) {
    if (sym.len == 0) continue;
    const std::string* t = vocab.at(sym.id);
    out.push_back({sym.id, t ? *t : std::string(), off, off + sym.len});
    off += sym.len;
  }
  if (cacheable && cache.words.size() < 10000) {
    cache.words.emplace(std::string(word),
                        std::vector<PieceToken>(out.begin() + static_cast<ptrdiff_t>(first), out.end()));
  }
}

}  // namespace

std::unique_ptr<Model> make_bpe(const json& j, const std::string& where) {
  auto m = std::make_unique<Bpe>();
  const json* v = jf::find(j, "vocab");
  CT_CHECK(v, where, ".vocab: missing");
  m->vocab.read(*v, where + ".vocab");
  if (const json* u = jf::find(j, "unk_token")) {
    CT_CHECK(u->is_string(), where, ".unk_token: expected a string");
    m->unk_token = u->get<std::string>();
    m->has_unk = true;
    CT_CHECK(m->vocab.find(m->unk_token) >= 0, where, ".unk_token: '", m->unk_token, "' is not in the vocab");
  }
  if (const json* p = jf::find(j, "continuing_subword_prefix")) {
    CT_CHECK(p->is_string(), where, ".continuing_subword_prefix: expected a string");
    m->prefix = p->get<std::string>();
    m->has_prefix = true;
  }
  if (const json* s = jf::find(j, "end_of_word_suffix")) {
    CT_CHECK(s->is_string(), where, ".end_of_word_suffix: expected a string");
    m->suffix = s->get<std::string>();
    m->has_suffix = true;
  }
  m->fuse_unk = jf::get_bool(j, "fuse_unk", false, where);
  m->byte_fallback = jf::get_bool(j, "byte_fallback", false, where);
  m->ignore_merges = jf::get_bool(j, "ignore_merges", false, where);
  if (const json* d = jf::find(j, "dropout")) {
    CT_CHECK(d->is_number() && d->get<double>() == 0.0, where,
             ".dropout: BPE dropout is not supported (training data must be deterministic), got ", d->dump());
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    m->byte_ids[b] = m->vocab.find(name);
  }
  const json* merges = jf::find(j, "merges");
  CT_CHECK(merges && merges->is_array(), where, ".merges: expected a list");
  m->merges.reserve(merges->size());
  const size_t prefix_len = m->has_prefix ? m->prefix.size() : 0;
  int32_t rank = 0;
  for (size_t i = 0; i < merges->size(); ++i) {
    const json& e = (*merges)[i];
    std::string a, b;
    if (e.is_string()) {
      const std::string line = e.get<std::string>();
      if (line.rfind("#version", 0) == 0) continue;
      const size_t sp = line.find(' ');
      CT_CHECK(sp != std::string::npos && line.find(' ', sp + 1) == std::string::npos, where, ".merges[", i,
               "]: expected \"a b\", got \"", line, "\"");
      a = line.substr(0, sp);
      b = line.substr(sp + 1);
    } else {
      CT_CHECK(e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string(), where, ".merges[", i,
               "]: expected \"a b\" or [\"a\", \"b\"], got ", e.dump().substr(0, 80));
      a = e[0].get<std::string>();
      b = e[1].get<std::string>();
    }
    const int32_t ia = m->vocab.find(a), ib = m->vocab.find(b);
    CT_CHECK(ia >= 0, where, ".merges[", i, "]: token '", a, "' is not in the vocab");
    CT_CHECK(ib >= 0, where, ".merges[", i, "]: token '", b, "' is not in the vocab");
    const std::string merged = a + (b.size() >= prefix_len ? b.substr(prefix_len) : std::string());
    const int32_t im = m->vocab.find(merged);
    CT_CHECK(im >= 0, where, ".merges[", i, "]: merged token '", merged, "' is not in the vocab");
    m->merges.insert_or_assign(pair_key(ia, ib), std::make_pair(rank, im));
    ++rank;
  }
  return m;
}

}  // namespace ct::text

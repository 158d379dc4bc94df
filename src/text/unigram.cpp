// HF's Unigram model: best-scoring segmentation (strict improvement keeps the first candidate on ties),
// unknown characters scored min - 10 and fused, optional byte fallback.
#include <cstdio>

#include "text/json_fields.h"
#include "text/models.h"
#include "text/unicode.h"

namespace ct::text {
namespace {

using nlohmann::json;

class Unigram : public Model {
 public:
  std::vector<std::string> pieces;
  std::vector<double> scores;
  VocabIndex index;
  int32_t unk_id = -1;
  bool byte_fallback = false;
  double min_score = 0;
  size_t max_piece_bytes = 0;

  void tokenize(std::string_view word, std::vector<PieceToken>& out) const override;
  int32_t token_to_id(std::string_view t) const override {
    auto it = index.find(t);
    return it == index.end() ? -1 : it->second;
  }
  const std::string* id_to_token(int32_t id) const override {
    return id >= 0 && static_cast<size_t>(id) < pieces.size() ? &pieces[static_cast<size_t>(id)] : nullptr;
  }
  size_t vocab_size() const override { return pieces.size(); }
};

struct Node {
  double score = 0;
  int64_t start = -1;
  int32_t id = -1;
};

void Unigram::tokenize(std::string_view s, std::vector<PieceToken>& out) const {
  if (s.empty()) return;
  const double unk_score = min_score - 10.0;
  thread_local std::vector<Node> best;
  best.assign(s.size() + 1, Node{});
  best[0].start = 0;
  size_t at = 0;
  while (at < s.size()) {
    const double here = best[at].score;
    size_t mblen;
    decode_utf8(s.data() + at, s.size() - at, mblen);
    bool single = false;
    // Every vocab piece that is a prefix of s[at..], shortest first (the order of HF's trie walk).
    size_t end = at;
    while (end < s.size() && end - at < max_piece_bytes) {
      size_t len;
      decode_utf8(s.data() + end, s.size() - end, len);
      end += len;
      if (end - at > max_piece_bytes) break;
      auto it = index.find(s.substr(at, end - at));
      if (it == index.end()) continue;
      const double cand = here + scores[static_cast<size_t>(it->second)];
      Node& t = best[end];
      if (t.start < 0 || cand > t.score) t = {cand, static_cast<int64_t>(at), it->second};
      if (end - at == mblen) single = true;
    }
    if (!single) {
      CT_CHECK(unk_id >= 0, "Unigram: a character of '", std::string(s),
               "' is not in the vocab and unk_id is null");
      const double cand = here + unk_score;
      Node& t = best[at + mblen];
      if (t.start < 0 || cand > t.score) t = {cand, static_cast<int64_t>(at), unk_id};
    }
    at += mblen;
  }
  // Backtrack; consecutive unknowns become one piece.
  thread_local std::vector<std::pair<size_t, size_t>> spans;  // (begin, end) of each final piece, reversed
  spans.clear();
  size_t end = s.size();
  bool in_unk = false;
  while (end > 0) {
    const Node& n = best[end];
    const auto start = static_cast<size_t>(n.start);
    if (unk_id >= 0 && n.id == unk_id) {
      if (in_unk) {
        spans.back().first = start;
      } else {
        spans.push_back({start, end});
      }
      in_unk = true;
    } else {
      spans.push_back({start, end});
      in_unk = false;
    }
    end = start;
  }
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
    const std::string_view piece = s.substr(it->first, it->second - it->first);
    const auto b = static_cast<uint32_t>(it->first), e = static_cast<uint32_t>(it->second);
    const int32_t id = token_to_id(piece);
    if (id >= 0) {
      out.push_back({id, std::string(piece), b, e});
      continue;
    }
    if (byte_fallback) {
      bool all = true;
      std::vector<PieceToken> bytes;
      for (char c : piece) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned char>(c));
        const int32_t bid = token_to_id(name);
        if (bid < 0) {
          all = false;
          break;
        }
        bytes.push_back({bid, name, b, e});
      }
      if (all) {
        out.insert(out.end(), bytes.begin(), bytes.end());
        continue;
      }
    }
    out.push_back({unk_id, std::string(piece), b, e});
  }
}

}  // namespace

std::unique_ptr<Model> make_unigram(const json& j, const std::string& where) {
  auto m = std::make_unique<Unigram>();
  const json* v = jf::find(j, "vocab");
  CT_CHECK(v && v->is_array(), where, ".vocab: expected a list of [piece, score]");
  m->pieces.reserve(v->size());
  m->scores.reserve(v->size());
  double min_score = 1e300;
  for (size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    CT_CHECK(e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_number(), where, ".vocab[", i,
             "]: expected [piece, score], got ", e.dump().substr(0, 80));
    m->pieces.push_back(e[0].get<std::string>());
    m->scores.push_back(e[1].get<double>());
    min_score = std::min(min_score, m->scores.back());
    m->index.insert_or_assign(m->pieces.back(), static_cast<int32_t>(i));
    m->max_piece_bytes = std::max(m->max_piece_bytes, m->pieces.back().size());
  }
  m->min_score = v->empty() ? 0.0 : min_score;
  const int64_t unk = jf::get_int(j, "unk_id", -1, where);
  CT_CHECK(unk < static_cast<int64_t>(m->pieces.size()), where, ".unk_id: ", unk, " is outside the vocab of ",
           m->pieces.size());
  m->unk_id = static_cast<int32_t>(unk);
  m->byte_fallback = jf::get_bool(j, "byte_fallback", false, where);
  return m;
}

}  // namespace ct::text

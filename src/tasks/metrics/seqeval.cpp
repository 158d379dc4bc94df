#include "tasks/metrics/seqeval.h"

#include <set>
#include <string_view>
#include <tuple>

#include "core/error.h"

namespace ct::tasks {
namespace {

// A tag split as seqeval splits it without `suffix`: the first character is the position marker (B, I, E, S,
// O, or anything), the type is what follows the first '-' of the rest (the whole rest when it has none), "_"
// when that is empty.
struct Tag {
  std::string marker, type;
};

Tag split_tag(const std::string& tag) {
  // The first code point, not byte: Python indexes characters.
  size_t n = 1;
  const auto lead = static_cast<unsigned char>(tag[0]);
  if (lead >= 0xF0)
    n = 4;
  else if (lead >= 0xE0)
    n = 3;
  else if (lead >= 0xC0)
    n = 2;
  n = std::min(n, tag.size());
  std::string_view rest = std::string_view(tag).substr(n);
  const size_t dash = rest.find('-');
  if (dash != std::string_view::npos) rest = rest.substr(dash + 1);
  return Tag{tag.substr(0, n), rest.empty() ? std::string("_") : std::string(rest)};
}

bool end_of_chunk(const std::string& prev_tag, const std::string& tag, const std::string& prev_type,
                  const std::string& type) {
  if (prev_tag == "E" || prev_tag == "S") return true;
  if ((prev_tag == "B" || prev_tag == "I") && (tag == "B" || tag == "S" || tag == "O")) return true;
  return prev_tag != "O" && prev_tag != "." && prev_type != type;
}

bool start_of_chunk(const std::string& prev_tag, const std::string& tag, const std::string& prev_type,
                    const std::string& type) {
  if (tag == "B" || tag == "S") return true;
  if ((prev_tag == "E" || prev_tag == "S" || prev_tag == "O") && (tag == "E" || tag == "I")) return true;
  return tag != "O" && tag != "." && prev_type != type;
}

void check_shapes(const TagSequences& predictions, const TagSequences& references) {
  CT_CHECK(predictions.size() == references.size(), "seqeval: ", predictions.size(),
           " predicted sentences for ", references.size(),
           " reference sentences (expected one prediction per sentence)");
  for (size_t s = 0; s < predictions.size(); ++s)
    CT_CHECK(predictions[s].size() == references[s].size(), "seqeval: sentence ", s, " has ",
             predictions[s].size(), " predicted tags for ", references[s].size(),
             " reference tags (expected one per token)");
}

}  // namespace

bool Chunk::operator<(const Chunk& o) const {
  return std::tie(type, first, last) < std::tie(o.type, o.first, o.last);
}

std::vector<Chunk> chunks_of(const TagSequences& tags) {
  std::vector<Chunk> chunks;
  std::string prev_tag = "O", prev_type;
  int64_t begin = 0, i = 0;
  auto step = [&](const std::string& tag_text) {
    CT_CHECK(!tag_text.empty(), "seqeval: an empty tag at token ", i,
             " (expected tags such as B-PER, I-PER, O)");
    const Tag t = split_tag(tag_text);
    if (end_of_chunk(prev_tag, t.marker, prev_type, t.type)) chunks.push_back({prev_type, begin, i - 1});
    if (start_of_chunk(prev_tag, t.marker, prev_type, t.type)) begin = i;
    prev_tag = t.marker;
    prev_type = t.type;
    ++i;
  };
  for (const auto& sentence : tags) {
    for (const auto& tag : sentence) step(tag);
    step("O");
  }
  step("O");  // seqeval appends one more O after the flattened sequence
  return chunks;
}

SeqevalScores seqeval(const TagSequences& predictions, const TagSequences& references) {
  check_shapes(predictions, references);
  std::map<std::string, std::set<std::pair<int64_t, int64_t>>> truth, guess;
  for (const Chunk& c : chunks_of(references)) truth[c.type].insert({c.first, c.last});
  for (const Chunk& c : chunks_of(predictions)) guess[c.type].insert({c.first, c.last});
  std::set<std::string> types;
  for (const auto& [t, _] : truth) types.insert(t);
  for (const auto& [t, _] : guess) types.insert(t);

  // precision_recall_fscore_support's arithmetic: 0 where a denominator is 0, F1 = 2PR / (P + R).
  auto score = [](int64_t tp, int64_t predicted, int64_t actual) {
    EntityScore s;
    s.precision = predicted ? static_cast<double>(tp) / static_cast<double>(predicted) : 0.0;
    s.recall = actual ? static_cast<double>(tp) / static_cast<double>(actual) : 0.0;
    const double denom = s.precision + s.recall;
    s.f1 = denom == 0.0 ? 0.0 : 2.0 * s.precision * s.recall / denom;
    s.number = actual;
    return s;
  };
  SeqevalScores out;
  int64_t tp_all = 0, predicted_all = 0, actual_all = 0;
  for (const std::string& t : types) {
    const auto& a = truth[t];
    const auto& p = guess[t];
    int64_t tp = 0;
    for (const auto& span : p) tp += a.count(span);
    out.per_type[t] = score(tp, static_cast<int64_t>(p.size()), static_cast<int64_t>(a.size()));
    tp_all += tp;
    predicted_all += static_cast<int64_t>(p.size());
    actual_all += static_cast<int64_t>(a.size());
  }
  const EntityScore micro = score(tp_all, predicted_all, actual_all);
  out.overall_precision = micro.precision;
  out.overall_recall = micro.recall;
  out.overall_f1 = micro.f1;

  int64_t tokens = 0, right = 0;
  for (size_t s = 0; s < references.size(); ++s)
    for (size_t k = 0; k < references[s].size(); ++k) {
      ++tokens;
      right += predictions[s][k] == references[s][k];
    }
  CT_CHECK(tokens > 0, "seqeval: no tokens to score (every sentence is empty)");
  out.overall_accuracy = static_cast<double>(right) / static_cast<double>(tokens);
  return out;
}

}  // namespace ct::tasks

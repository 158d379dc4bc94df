// VocabTrie construction from the sorted vocab; see vocab_trie.h.
#include "text/vocab_trie.h"

#include <algorithm>

namespace ct::text {
namespace {
constexpr uint16_t kDenseAbove = 8;  // nodes with more children get a direct 256-entry table
}

void VocabTrie::build(std::vector<std::pair<std::string_view, int32_t>> entries) {
  std::sort(entries.begin(), entries.end());
  nodes_.clear();
  labels_.clear();
  targets_.clear();
  dense_.clear();
  build_node(entries, 0, entries.size(), 0);
}

uint32_t VocabTrie::build_node(const std::vector<std::pair<std::string_view, int32_t>>& e, size_t lo,
                               size_t hi, size_t depth) {
  const auto node = static_cast<uint32_t>(nodes_.size());
  nodes_.emplace_back();
  size_t i = lo;
  if (i < hi && e[i].first.size() == depth)
    nodes_[node].id = e[i++].second;  // sorted: the exact key comes first
  std::vector<std::pair<uint8_t, std::pair<size_t, size_t>>> groups;
  while (i < hi) {
    const auto b = static_cast<uint8_t>(e[i].first[depth]);
    size_t j = i;
    while (j < hi && static_cast<uint8_t>(e[j].first[depth]) == b) ++j;
    groups.push_back({b, {i, j}});
    i = j;
  }
  const auto begin = static_cast<uint32_t>(labels_.size());
  for (const auto& g : groups) labels_.push_back(g.first);
  targets_.resize(labels_.size(), kNone);
  for (size_t k = 0; k < groups.size(); ++k) {
    targets_[begin + k] = build_node(e, groups[k].second.first, groups[k].second.second, depth + 1);
  }
  Node& n = nodes_[node];
  n.count = static_cast<uint16_t>(groups.size());
  n.begin = begin;
  if (n.count > kDenseAbove) {
    n.dense = 1;
    n.begin = static_cast<uint32_t>(dense_.size());
    dense_.resize(dense_.size() + 256, kNone);
    for (size_t k = 0; k < groups.size(); ++k) dense_[n.begin + groups[k].first] = targets_[begin + k];
  }
  return node;
}

}  // namespace ct::text

// Byte trie over the vocab so WordPiece finds the longest vocab entry at a position in one walk (the same
// answer as HF's probe-longest-substring-first loop, without a hash lookup per candidate length).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ct::text {

class VocabTrie {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  // `entries` are (token, id) pairs with distinct tokens.
  void build(std::vector<std::pair<std::string_view, int32_t>> entries);

  uint32_t root() const { return 0; }
  // Node reached from `node` by `byte`, or kNone.
  uint32_t child(uint32_t node, uint8_t byte) const {
    const Node& n = nodes_[node];
    if (n.dense) return dense_[n.begin + byte];
    for (uint32_t k = n.begin, e = n.begin + n.count; k < e; ++k) {
      if (labels_[k] == byte) return targets_[k];
    }
    return kNone;
  }
  // Node reached by walking all of `s` from `node`, or kNone.
  uint32_t walk(uint32_t node, std::string_view s) const {
    for (char c : s) {
      if (node == kNone) break;
      node = child(node, static_cast<uint8_t>(c));
    }
    return node;
  }
  int32_t id(uint32_t node) const { return nodes_[node].id; }  // -1 when no token ends here

 private:
  struct Node {
    uint32_t begin = 0;  // into labels_/targets_, or into dense_ when dense
    uint16_t count = 0;
    uint16_t dense = 0;
    int32_t id = -1;
  };
  uint32_t build_node(const std::vector<std::pair<std::string_view, int32_t>>& e, size_t lo, size_t hi,
                      size_t depth);

  std::vector<Node> nodes_;
  std::vector<uint8_t> labels_;
  std::vector<uint32_t> targets_;
  std::vector<uint32_t> dense_;  // 256 slots per node with many children
};

}  // namespace ct::text

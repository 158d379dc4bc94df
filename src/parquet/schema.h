// The schema tree rebuilt from the footer's pre-order element list, with each leaf's maximum definition and
// repetition levels (Dremel) and the structural reading of LIST/MAP groups.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parquet/metadata.h"

namespace ct::parquet {

struct SchemaNode {
  std::string name;
  int32_t repetition = kRequired;
  int32_t physical = -1;  // leaves only
  int32_t type_length = 0;
  int32_t converted = -1;
  int32_t logical = kLogicalNone;
  int32_t int_bit_width = 0;
  bool int_signed = true;
  std::vector<int> children;  // node indices
  int parent = -1;
  int leaf = -1;            // column index for leaves
  int def_level = 0;        // definition level at which this node is present
  int rep_level = 0;        // repetition level of its nearest repeated ancestor-or-self
  std::vector<int> leaves;  // column indices under this node, in order

  bool is_leaf() const { return physical >= 0 && children.empty(); }
};

class Schema {
 public:
  // `what` names the file in errors.
  Schema(const std::vector<SchemaElement>& elements, const std::string& what);

  const SchemaNode& node(int i) const { return nodes_[static_cast<size_t>(i)]; }
  const SchemaNode& root() const { return nodes_[0]; }
  int num_leaves() const { return static_cast<int>(leaf_nodes_.size()); }
  const SchemaNode& leaf(int column) const {
    return nodes_[static_cast<size_t>(leaf_nodes_[static_cast<size_t>(column)])];
  }
  // Dotted path of a leaf (e.g. "answers.text.list.element").
  std::string leaf_path(int column) const;
  // Top-level field index by name, -1 when absent.
  int find_top(const std::string& name) const;

  // A LIST-annotated (or legacy repeated) node's element node, following parquet-format's backward-compatible
  // rules; -1 when `n` is not a list.
  int list_element(int n) const;
  // The repeated child of a LIST/MAP group, -1 otherwise.
  int list_repeated_child(int n) const;

 private:
  int build(const std::vector<SchemaElement>& el, size_t& pos, int parent, int depth,
            const std::string& what);
  std::vector<SchemaNode> nodes_;
  std::vector<int> leaf_nodes_;
};

}  // namespace ct::parquet

#include "parquet/schema.h"

#include "core/error.h"

namespace ct::parquet {

Schema::Schema(const std::vector<SchemaElement>& el, const std::string& what) {
  CT_CHECK(!el.empty(), what, ": empty schema");
  nodes_.reserve(el.size());
  size_t pos = 0;
  build(el, pos, -1, 0, what);
  CT_CHECK(pos == el.size(), what, ": schema has ", el.size(), " elements, the root's tree covers ", pos);
  CT_CHECK(!leaf_nodes_.empty(), what, ": schema has no columns");
}

int Schema::build(const std::vector<SchemaElement>& el, size_t& pos, int parent, int depth,
                  const std::string& what) {
  constexpr int kMaxDepth = 64;
  CT_CHECK(depth <= kMaxDepth, what, ": schema nested deeper than ", kMaxDepth);
  CT_CHECK(pos < el.size(), what, ": schema element ", pos, " missing (num_children overruns the list)");
  const SchemaElement& e = el[pos++];
  const int idx = static_cast<int>(nodes_.size());
  nodes_.emplace_back();
  {
    SchemaNode& n = nodes_.back();
    n.name = e.name;
    // The root's repetition is meaningless (Arrow writes one anyway).
    n.repetition = parent < 0 ? kRequired : (e.repetition < 0 ? kRequired : e.repetition);
    CT_CHECK(n.repetition >= 0 && n.repetition <= 2, what, ": schema element '", e.name, "' has repetition ",
             e.repetition);
    n.type_length = e.type_length;
    n.converted = e.converted_type;
    n.logical = e.logical;
    n.int_bit_width = e.int_bit_width;
    n.int_signed = e.int_signed;
    n.parent = parent;
    if (parent >= 0) {
      const SchemaNode& p = nodes_[static_cast<size_t>(parent)];
      n.def_level = p.def_level + (n.repetition != kRequired ? 1 : 0);
      n.rep_level = p.rep_level + (n.repetition == kRepeated ? 1 : 0);
    }
  }
  CT_CHECK(e.num_children >= 0 && static_cast<size_t>(e.num_children) <= el.size() - pos, what,
           ": schema element '", e.name, "' claims ", e.num_children, " children");
  if (e.num_children == 0) {
    CT_CHECK(parent >= 0, what, ": schema root has no children");
    CT_CHECK(e.type >= 0 && e.type <= kFixedLenByteArray, what, ": leaf '", e.name, "' has physical type ",
             e.type);
    CT_CHECK(e.type != kFixedLenByteArray || (e.type_length > 0 && e.type_length <= (1 << 20)), what,
             ": FIXED_LEN_BYTE_ARRAY leaf '", e.name, "' has type_length ", e.type_length);
    nodes_[static_cast<size_t>(idx)].physical = e.type;
    nodes_[static_cast<size_t>(idx)].leaf = static_cast<int>(leaf_nodes_.size());
    nodes_[static_cast<size_t>(idx)].leaves.push_back(static_cast<int>(leaf_nodes_.size()));
    leaf_nodes_.push_back(idx);
    return idx;
  }
  for (int c = 0; c < e.num_children; ++c) {
    const int child = build(el, pos, idx, depth + 1, what);
    SchemaNode& n = nodes_[static_cast<size_t>(idx)];
    n.children.push_back(child);
    const auto& cl = nodes_[static_cast<size_t>(child)].leaves;
    n.leaves.insert(n.leaves.end(), cl.begin(), cl.end());
  }
  return idx;
}

std::string Schema::leaf_path(int column) const {
  std::vector<const std::string*> parts;
  for (int n = leaf_nodes_[static_cast<size_t>(column)]; n > 0; n = nodes_[static_cast<size_t>(n)].parent)
    parts.push_back(&nodes_[static_cast<size_t>(n)].name);
  std::string s;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!s.empty()) s += '.';
    s += **it;
  }
  return s;
}

int Schema::find_top(const std::string& name) const {
  for (int c : root().children)
    if (nodes_[static_cast<size_t>(c)].name == name) return c;
  return -1;
}

int Schema::list_repeated_child(int n) const {
  const SchemaNode& s = node(n);
  const bool annotated = s.logical == kLogicalList || s.logical == kLogicalMap || s.converted == kList ||
                         s.converted == kMap || s.converted == kMapKeyValue;
  if (!annotated || s.children.size() != 1) return -1;
  const int r = s.children[0];
  return node(r).repetition == kRepeated ? r : -1;
}

int Schema::list_element(int n) const {
  const int r = list_repeated_child(n);
  if (r < 0) return -1;
  const SchemaNode& rep = node(r);
  // parquet-format LogicalTypes.md backward-compatibility rules: a repeated primitive, a repeated group of
  // several fields, or one named "array" / "<list>_tuple" is itself the element; otherwise its only child is.
  if (rep.is_leaf() || rep.children.size() != 1 || rep.name == "array" || rep.name == node(n).name + "_tuple")
    return r;
  return rep.children[0];
}

}  // namespace ct::parquet

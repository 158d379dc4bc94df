#include "parquet/assemble.h"

#include "core/error.h"

namespace ct::parquet {
namespace {

struct Cursor {
  const ChunkData* d = nullptr;
  size_t entry = 0;
  size_t value = 0;
};

class Assembler {
 public:
  Assembler(const Schema& s, const std::vector<const ChunkData*>& chunks) : s_(s) {
    cur_.resize(chunks.size());
    for (size_t c = 0; c < chunks.size(); ++c) cur_[c].d = chunks[c];
  }

  Value read(int n) {
    const SchemaNode& node = s_.node(n);
    Cursor& first = cursor(node.leaves.front());
    if (node.repetition == kRepeated) return read_repeated(n, n);  // legacy bare repeated field: a list
    if (node.repetition == kOptional && def(first) < node.def_level) return null_here(node);
    if (node.is_leaf()) return read_leaf(node);
    if (s_.list_element(n) >= 0) return read_list(n);
    Value v;
    v.kind = Value::Kind::Struct;
    for (int c : node.children) {
      v.keys.push_back(s_.node(c).name);
      v.items.push_back(read(c));
    }
    return v;
  }

  void check_row_start(int top) {
    for (int leaf : s_.node(top).leaves) {
      Cursor& c = cursor(leaf);
      if (c.d->rep[c.entry] != 0)
        fail("leaf ", s_.leaf_path(leaf), " is not at a row start (levels disagree)");
    }
  }

  void check_done(int top) {
    for (int leaf : s_.node(top).leaves) {
      const Cursor& c = cur_[static_cast<size_t>(leaf)];
      if (c.entry != c.d->def.size())
        fail("leaf ", s_.leaf_path(leaf), " has ", c.d->def.size() - c.entry,
             " level entries beyond the rows");
    }
  }

 private:
  Cursor& cursor(int leaf) {
    Cursor& c = cur_[static_cast<size_t>(leaf)];
    if (c.entry >= c.d->def.size()) fail("leaf ", s_.leaf_path(leaf), " runs out of level entries");
    return c;
  }
  static int def(const Cursor& c) { return c.d->def[c.entry]; }

  // A null or empty node ends every leaf beneath it in exactly one level entry.
  Value null_here(const SchemaNode& node, Value::Kind kind = Value::Kind::Null) {
    for (int leaf : node.leaves) {
      Cursor& c = cursor(leaf);
      if (def(c) >= s_.leaf(leaf).def_level)
        fail("leaf ", s_.leaf_path(leaf), " has a value where its sibling's levels say '", node.name,
             "' is absent");
      ++c.entry;
    }
    Value v;
    v.kind = kind;
    return v;
  }

  Value read_leaf(const SchemaNode& node) {
    Cursor& c = cursor(node.leaf);
    Value v;
    if (def(c) < node.def_level) {  // a required leaf under present parents cannot be null
      fail("leaf ", s_.leaf_path(node.leaf), " definition level ", def(c), " below its own ", node.def_level);
    }
    const ChunkData& d = *c.d;
    if (c.value >= d.values.size(d.storage)) fail("leaf ", s_.leaf_path(node.leaf), " runs out of values");
    switch (d.storage) {
      case Storage::Ints: {
        const int64_t x = d.values.ints[c.value];
        if (node.physical == kBoolean) {
          v.kind = Value::Kind::Bool;
          v.i = x;
        } else {
          v.kind = Value::Kind::Int;
          // Unsigned 32-bit annotations store the bits in an INT32.
          const bool unsigned32 =
              node.physical == kInt32 &&
              ((node.logical == kLogicalInteger && !node.int_signed && node.int_bit_width == 32) ||
               node.converted == kUint32);
          v.i = unsigned32 ? static_cast<int64_t>(static_cast<uint32_t>(x)) : x;
        }
        break;
      }
      case Storage::Reals:
        v.kind = Value::Kind::Double;
        v.d = d.values.reals[c.value];
        break;
      case Storage::Bytes:
        v.kind = Value::Kind::String;
        v.s.assign(d.values.bytes[c.value]);
        break;
    }
    ++c.value;
    ++c.entry;
    return v;
  }

  Value read_list(int n) {
    const int r = s_.list_repeated_child(n);
    return read_repeated(r, s_.list_element(n));
  }

  // Elements of the repeated node `r` (instances of `elem`, which is `r` itself or its only child) until the
  // repetition level drops below r's: that entry starts another instance of something outside.
  Value read_repeated(int r, int elem) {
    const SchemaNode& rep = s_.node(r);
    Value v;
    v.kind = Value::Kind::List;
    Cursor& first = cursor(rep.leaves.front());
    if (def(first) < rep.def_level) {  // present but empty
      null_here(rep);
      return v;
    }
    const int leaf0 = rep.leaves.front();
    while (true) {
      v.items.push_back(elem == r ? read_element_of_repeated(r) : read(elem));
      const Cursor& c = cur_[static_cast<size_t>(leaf0)];
      if (c.entry >= c.d->def.size() || c.d->rep[c.entry] != rep.rep_level) break;
      if (v.items.size() > c.d->def.size()) fail("list longer than its column's level entries");
    }
    return v;
  }

  // The repeated node itself as the element: a leaf value, or a struct of its children.
  Value read_element_of_repeated(int r) {
    const SchemaNode& rep = s_.node(r);
    if (rep.is_leaf()) return read_leaf(rep);
    // A repeated group that is itself a LIST (parquet-format's old two-level list of lists,
    // parquet-testing's old_list_structure.parquet): each element is an inner list.
    if (s_.list_element(r) >= 0) return read_list(r);
    Value v;
    v.kind = Value::Kind::Struct;
    for (int c : rep.children) {
      v.keys.push_back(s_.node(c).name);
      v.items.push_back(read(c));
    }
    return v;
  }

  const Schema& s_;
  std::vector<Cursor> cur_;
};

}  // namespace

std::vector<Value> assemble_column(const Schema& schema, int top, const std::vector<const ChunkData*>& chunks,
                                   int64_t rows) {
  Assembler a(schema, chunks);
  std::vector<Value> out;
  // Every row takes at least one level entry, so the first leaf bounds a corrupt row count.
  const ChunkData* first = chunks[static_cast<size_t>(schema.node(top).leaves.front())];
  if (rows < 0 || static_cast<uint64_t>(rows) > first->def.size())
    fail("row group claims ", rows, " rows, column has ", first->def.size(), " level entries");
  out.reserve(static_cast<size_t>(rows));
  for (int64_t row = 0; row < rows; ++row) {
    a.check_row_start(top);
    out.push_back(a.read(top));
  }
  a.check_done(top);
  return out;
}

}  // namespace ct::parquet

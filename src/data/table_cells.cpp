// What the table loaders share below the format: one type per column, as Arrow needs and pyarrow infers it
// (a JSON column of 1 and 2.5 is float64; a struct column's type has every field any row has), and the
// strict UTF-8 decoding Python applies before pandas or the text loader see a character.
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "data/table_loaders.h"
#include "data/unicode_util.h"

namespace ct::data {
namespace {

using parquet::Value;

void unify(const std::vector<Value*>& cells) {
  size_t ints = 0, doubles = 0, lists = 0, structs = 0, values = 0;
  for (const Value* v : cells) {
    switch (v->kind) {
      case Value::Kind::Null:
        continue;
      case Value::Kind::Int:
        ++ints;
        break;
      case Value::Kind::Double:
        ++doubles;
        break;
      case Value::Kind::List:
        ++lists;
        break;
      case Value::Kind::Struct:
        ++structs;
        break;
      default:
        break;
    }
    ++values;
  }
  if (ints > 0 && doubles > 0 && ints + doubles == values) {
    for (Value* v : cells)
      if (v->kind == Value::Kind::Int) {
        v->kind = Value::Kind::Double;
        v->d = static_cast<double>(v->i);
        v->i = 0;
      }
  } else if (lists > 0 && lists == values) {
    std::vector<Value*> items;
    for (Value* v : cells)
      for (Value& item : v->items) items.push_back(&item);
    unify(items);
  } else if (structs > 0 && structs == values) {
    std::vector<std::string> keys;
    std::unordered_map<std::string, size_t> index;
    for (const Value* v : cells)
      for (const std::string& k : v->keys)
        if (index.try_emplace(k, keys.size()).second) keys.push_back(k);
    for (Value* v : cells) {
      if (v->is_null() || v->keys == keys) continue;
      std::vector<Value> items(keys.size());
      for (size_t k = 0; k < v->keys.size(); ++k) items[index[v->keys[k]]] = std::move(v->items[k]);
      v->items = std::move(items);
      v->keys = keys;
    }
    for (size_t k = 0; k < keys.size(); ++k) {
      std::vector<Value*> field;
      for (Value* v : cells)
        if (!v->is_null()) field.push_back(&v->items[k]);
      unify(field);
    }
  }
}

}  // namespace

void unify_column(std::vector<parquet::Value>& column) {
  std::vector<Value*> cells;
  cells.reserve(column.size());
  for (Value& v : column) cells.push_back(&v);
  unify(cells);
}

void check_utf8(std::string_view text, const std::string& source) {
  const size_t at = invalid_utf8_at(text);
  if (at == std::string_view::npos) return;
  int64_t line = 1;
  for (size_t i = 0; i < at; ++i) line += text[i] == '\n';
  fail(source, ": line ", line, ": invalid UTF-8 (byte 0x", std::hex,
       static_cast<int>(static_cast<unsigned char>(text[at])), std::dec, " at offset ", at,
       "); the file must be UTF-8");
}

}  // namespace ct::data

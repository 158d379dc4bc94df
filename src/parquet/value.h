// A decoded cell: what one row holds for one top-level column, nested as lists and structs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ct::parquet {

struct Value {
  enum class Kind : uint8_t { Null, Bool, Int, Double, String, List, Struct };
  Kind kind = Kind::Null;
  int64_t i = 0;                  // Bool (0/1) and Int
  double d = 0;                   // Double (FLOAT widened)
  std::string s;                  // String: UTF-8 for STRING columns, raw bytes otherwise
  std::vector<Value> items;       // List elements, or Struct field values
  std::vector<std::string> keys;  // Struct field names, parallel to items

  bool is_null() const { return kind == Kind::Null; }
  // Struct field by name; nullptr when absent.
  const Value* field(const std::string& name) const {
    for (size_t k = 0; k < keys.size(); ++k)
      if (keys[k] == name) return &items[k];
    return nullptr;
  }
};

}  // namespace ct::parquet

// Shared by the Parquet tests: fixture paths, a reader of whole files, and Value -> JSON for comparing cells
// with expected.json (written by tools/make_fixtures.mjs alongside the fixtures).
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "parquet/value.h"

namespace ct::parquet::test {

inline std::string fixture(const std::string& name) {
  return std::string(CORETRAIN_TEST_DATA) + "/" + name;
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

inline nlohmann::json to_json(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Null:
      return nullptr;
    case Value::Kind::Bool:
      return v.i != 0;
    case Value::Kind::Int:
      return v.i;
    case Value::Kind::Double:
      return v.d;
    case Value::Kind::String:
      return v.s;
    case Value::Kind::List: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& x : v.items) a.push_back(to_json(x));
      return a;
    }
    case Value::Kind::Struct: {
      nlohmann::json o = nlohmann::json::object();
      for (size_t k = 0; k < v.keys.size(); ++k) o[v.keys[k]] = to_json(v.items[k]);
      return o;
    }
  }
  return nullptr;
}

// Empty when equal, else the first difference with its path (numbers compare by value).
inline std::string diff(const nlohmann::json& want, const nlohmann::json& got, const std::string& at) {
  if (want.is_number() && got.is_number()) {
    return want.get<double>() == got.get<double>() ? ""
                                                   : at + ": want " + want.dump() + ", got " + got.dump();
  }
  if (want.type() != got.type()) return at + ": want " + want.dump() + ", got " + got.dump();
  if (want.is_array()) {
    if (want.size() != got.size()) return at + ": want " + want.dump() + ", got " + got.dump();
    for (size_t i = 0; i < want.size(); ++i) {
      std::string d = diff(want[i], got[i], at + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    return "";
  }
  if (want.is_object()) {
    if (want.size() != got.size()) return at + ": want " + want.dump() + ", got " + got.dump();
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) return at + ": missing field " + it.key();
      std::string d = diff(it.value(), got[it.key()], at + "." + it.key());
      if (!d.empty()) return d;
    }
    return "";
  }
  return want == got ? "" : at + ": want " + want.dump() + ", got " + got.dump();
}

}  // namespace ct::parquet::test

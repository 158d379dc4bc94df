// Typed field access for tokenizer.json components: every wrong or missing field becomes one ct::Error line
// naming the JSON path and what was expected.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"

namespace ct::text::jf {

using nlohmann::json;

inline const json* find(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

inline bool get_bool(const json& j, const char* key, bool fallback, const std::string& where) {
  const json* v = find(j, key);
  if (!v) return fallback;
  CT_CHECK(v->is_boolean(), where, ".", key, ": expected true or false, got ", v->dump());
  return v->get<bool>();
}

inline std::string get_string(const json& j, const char* key, const std::string& fallback,
                              const std::string& where) {
  const json* v = find(j, key);
  if (!v) return fallback;
  CT_CHECK(v->is_string(), where, ".", key, ": expected a string, got ", v->dump());
  return v->get<std::string>();
}

inline std::string need_string(const json& j, const char* key, const std::string& where) {
  const json* v = find(j, key);
  CT_CHECK(v && v->is_string(), where, ".", key, ": expected a string, got ", v ? v->dump() : "nothing");
  return v->get<std::string>();
}

inline int64_t get_int(const json& j, const char* key, int64_t fallback, const std::string& where) {
  const json* v = find(j, key);
  if (!v) return fallback;
  CT_CHECK(v->is_number_integer(), where, ".", key, ": expected an integer, got ", v->dump());
  return v->get<int64_t>();
}

inline std::string type_of(const json& j, const std::string& where) {
  CT_CHECK(j.is_object(), where, ": expected an object with \"type\", got ", j.dump().substr(0, 80));
  return need_string(j, "type", where);
}

[[noreturn]] inline void unsupported(const std::string& where, const char* kind, const std::string& type,
                                     const char* expected) {
  fail(where, ": ", kind, " type '", type, "' is not supported (expected one of ", expected, ")");
}

// A single character field such as Metaspace's replacement.
std::u32string utf32(const std::string& s);

}  // namespace ct::text::jf

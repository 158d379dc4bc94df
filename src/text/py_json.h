// JSON in and out of the engine as Python sees it: data parsed as json.loads would (object keys in file
// order, which is why this takes ordered_json), and transformers' `tojson` filter, which is
// json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "text/jinja_value.h"

namespace ct::text::py {

jinja::Value from_json(const nlohmann::ordered_json& j);

struct DumpsOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;  // json.dumps' indent, already a string (an int n is n spaces)
  std::optional<std::string> item_separator;
  std::optional<std::string> key_separator;
  bool sort_keys = false;
};

// Raises TypeError as Python does for Undefined, callables and namespaces.
std::string dumps(const jinja::Value& v, const DumpsOptions& options);

}  // namespace ct::text::py

#include "tasks/config_overrides.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "core/error.h"

namespace ct::tasks {
namespace {

using nlohmann::json;

// update_from_string's int(v) / float(v): the whole value must parse.
bool parse_int(const std::string& s, int64_t* out) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool parse_float(const std::string& s, double* out) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || errno == ERANGE || *end != '\0') return false;
  *out = v;
  return true;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

void update_from_string(json& j, const std::string& overrides, const std::string& model_type,
                        const std::function<bool(const std::string&)>& overridable,
                        const std::vector<std::pair<std::string, std::string>>& aliases) {
  size_t at = 0;
  while (!overrides.empty() && at <= overrides.size()) {
    const size_t comma = std::min(overrides.find(',', at), overrides.size());
    const std::string item = overrides.substr(at, comma - at);
    at = comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || item.find('=', eq + 1) != std::string::npos)
      fail("--config_overrides: '", item, "' is not key=value");
    std::string key = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    for (const auto& [alias, field] : aliases)
      if (key == alias) key = field;
    if (!overridable(key)) {
      std::string known;
      for (const auto& [k, v] : j.items())
        if (overridable(k)) known += (known.empty() ? "" : ", ") + k;
      fail("--config_overrides: key '", item.substr(0, eq), "' is not a ", model_type,
           " config field coretrain supports (", known, ")");
    }
    json& old = j[key];
    if (old.is_boolean()) {
      const std::string v = lower(value);
      if (v == "true" || v == "1" || v == "y" || v == "yes") {
        old = true;
      } else if (v == "false" || v == "0" || v == "n" || v == "no") {
        old = false;
      } else {
        fail("--config_overrides: can't derive true or false from '", value, "' (key ", key, ")");
      }
    } else if (old.is_number_integer()) {
      int64_t v = 0;
      if (!parse_int(value, &v)) fail("--config_overrides: ", key, "=", value, ": expected an integer");
      old = v;
    } else if (old.is_number()) {
      double v = 0;
      if (!parse_float(value, &v)) fail("--config_overrides: ", key, "=", value, ": expected a number");
      old = v;
    } else {
      old = value;
    }
  }
}

}  // namespace ct::tasks

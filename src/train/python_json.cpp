#include "train/python_json.h"

#include <cmath>
#include <limits>
#include <string_view>

namespace ct::train {

namespace {

// Stand-ins that survive nlohmann's dump and parse as strings: control characters no real key or value of
// these files holds.
constexpr std::string_view kTokens[] = {"-Infinity", "Infinity", "NaN"};
constexpr char kMark = '\x01';
std::string stand_in(std::string_view token) {
  return kMark + ("ct-python-json:" + std::string(token)) + kMark;
}
// How nlohmann dumps a stand-in (control characters escaped), quotes included.
std::string dumped_stand_in(std::string_view token) {
  return "\"\\u0001ct-python-json:" + std::string(token) + "\\u0001\"";
}

bool has_non_finite(const nlohmann::json& j) {
  if (j.is_number_float()) return !std::isfinite(j.get<double>());
  if (j.is_structured())
    for (const auto& v : j)
      if (has_non_finite(v)) return true;
  return false;
}

void to_stand_ins(nlohmann::json& j) {
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (std::isnan(v))
      j = stand_in("NaN");
    else if (std::isinf(v))
      j = stand_in(v > 0 ? "Infinity" : "-Infinity");
  } else if (j.is_structured()) {
    for (auto& v : j) to_stand_ins(v);
  }
}

void from_stand_ins(nlohmann::json& j) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == stand_in("NaN"))
      j = std::numeric_limits<double>::quiet_NaN();
    else if (s == stand_in("Infinity"))
      j = std::numeric_limits<double>::infinity();
    else if (s == stand_in("-Infinity"))
      j = -std::numeric_limits<double>::infinity();
  } else if (j.is_structured()) {
    for (auto& v : j) from_stand_ins(v);
  }
}

void replace_all(std::string& s, const std::string& from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

}  // namespace

std::string dump_python_json(const nlohmann::json& j, int indent) {
  if (!has_non_finite(j)) return j.dump(indent);
  nlohmann::json copy = j;
  to_stand_ins(copy);
  std::string out = copy.dump(indent);
  for (std::string_view token : kTokens) replace_all(out, dumped_stand_in(token), token);
  return out;
}

nlohmann::json parse_python_json(const std::string& text) {
  std::string quoted;
  bool changed = false, in_string = false;
  quoted.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      quoted += c;
      if (c == '\\' && i + 1 < text.size())
        quoted += text[++i];
      else if (c == '"')
        in_string = false;
      ++i;
      continue;
    }
    if (c == '"') in_string = true;
    bool matched = false;
    for (std::string_view token : kTokens) {
      if (std::string_view(text).substr(i, token.size()) == token) {
        quoted += nlohmann::json(stand_in(token)).dump();
        i += token.size();
        matched = changed = true;
        break;
      }
    }
    if (!matched) quoted += text[i++];
  }
  nlohmann::json j = nlohmann::json::parse(changed ? quoted : text);
  if (changed) from_stand_ins(j);
  return j;
}

}  // namespace ct::train

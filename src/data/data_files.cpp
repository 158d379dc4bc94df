#include "data/data_files.h"

#include <algorithm>
#include <regex>

#include "core/error.h"

namespace ct::data {

using json = nlohmann::ordered_json;

namespace {

bool match_class(const std::string& p, size_t& i, char c) {
  // p[i] == '['; advances i past ']'.
  size_t j = i + 1;
  bool negate = j < p.size() && (p[j] == '!' || p[j] == '^');
  if (negate) ++j;
  bool hit = false;
  bool first = true;
  for (; j < p.size() && (first || p[j] != ']'); ++j, first = false) {
    if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
      if (c >= p[j] && c <= p[j + 2]) hit = true;
      j += 2;
    } else if (p[j] == c) {
      hit = true;
    }
  }
  i = j;  // at ']'
  return hit != negate;
}

bool match_component(const std::string& p, size_t pi, const std::string& s, size_t si) {
  while (pi < p.size()) {
    const char c = p[pi];
    if (c == '*') {
      while (pi < p.size() && p[pi] == '*') ++pi;
      for (size_t k = si; k <= s.size(); ++k)
        if (match_component(p, pi, s, k)) return true;
      return false;
    }
    if (si >= s.size()) return false;
    if (c == '?') {
      ++pi;
      ++si;
    } else if (c == '[' && p.find(']', pi + 2) != std::string::npos) {
      if (!match_class(p, pi, s[si])) return false;
      ++pi;
      ++si;
    } else {
      if (c != s[si]) return false;
      ++pi;
      ++si;
    }
  }
  return si == s.size();
}

std::vector<std::string> split_path(const std::string& s) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (true) {
    const size_t slash = s.find('/', pos);
    parts.push_back(s.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos));
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  return parts;
}

bool match_parts(const std::vector<std::string>& p, size_t pi, const std::vector<std::string>& s, size_t si) {
  if (pi == p.size()) return si == s.size();
  if (p[pi] == "**") {
    for (size_t k = si; k <= s.size(); ++k)
      if (match_parts(p, pi + 1, s, k)) return true;
    return false;
  }
  if (si == s.size()) return false;
  return match_component(p[pi], 0, s[si], 0) && match_parts(p, pi + 1, s, si + 1);
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::vector<std::string> patterns_of(const json& v, const std::string& where) {
  std::vector<std::string> out;
  if (v.is_string()) {
    out.push_back(v.get<std::string>());
  } else if (v.is_array()) {
    for (const auto& x : v) {
      CT_CHECK(x.is_string(), where, ": data_files path is ", x.type_name(), ", expected a string");
      out.push_back(x.get<std::string>());
    }
  } else {
    fail(where, ": data_files path is ", v.type_name(), ", expected a string or a list of strings");
  }
  return out;
}

std::vector<std::string> expand(const std::vector<std::string>& patterns,
                                const std::vector<std::string>& files, const std::string& data_dir,
                                const std::string& where, const std::string& split, bool partial) {
  std::vector<std::string> out;
  for (std::string pat : patterns) {
    if (pat.rfind("./", 0) == 0) pat = pat.substr(2);
    if (!data_dir.empty()) pat = data_dir + "/" + pat;
    const auto parts = split_path(pat);
    size_t before = out.size();
    for (const auto& f : files)
      if (match_parts(parts, 0, split_path(f), 0) && std::find(out.begin(), out.end(), f) == out.end())
        out.push_back(f);
    CT_CHECK(partial || out.size() > before, where, ": split '", split, "' pattern '", pat,
             "' matches no file in the repo");
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
  }
  return out;
}

}  // namespace

bool glob_match(const std::string& pattern, const std::string& path) {
  return match_parts(split_path(pattern), 0, split_path(path), 0);
}

bool is_data_file(const std::string& path) {
  for (const auto& part : split_path(path))
    if (part.empty() || part[0] == '.' || part.rfind("__", 0) == 0) return false;
  static const char* exts[] = {".parquet", ".arrow", ".csv", ".tsv", ".json", ".jsonl", ".txt"};
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* e : exts) {
    const std::string ext(e);
    if (lower.size() > ext.size() && lower.compare(lower.size() - ext.size(), ext.size(), ext) == 0)
      return true;
  }
  return false;
}

const json& select_config(const json& configs, const std::string& name, const std::string& where) {
  CT_CHECK(configs.is_array() && !configs.empty(), where, ": README configs is not a non-empty list");
  std::vector<std::string> names;
  const json* chosen = nullptr;
  const json* by_default = nullptr;
  for (const auto& c : configs) {
    CT_CHECK(c.is_object(), where, ": a README configs entry is not a mapping");
    const std::string n = c.contains("config_name") && c["config_name"].is_string()
                              ? c["config_name"].get<std::string>()
                              : "default";
    names.push_back(n);
    if (!name.empty() && n == name) chosen = &c;
    if (c.contains("default") && c["default"] == true) by_default = &c;
  }
  if (!name.empty()) {
    CT_CHECK(chosen, where, ": no config '", name, "'; available configs: ", join(names),
             " (pass one with --dataset_config_name)");
    return *chosen;
  }
  if (configs.size() == 1) return configs[0];
  if (by_default) return *by_default;
  for (size_t k = 0; k < names.size(); ++k)
    if (names[k] == "default") return configs[k];
  fail(where, ": config name is missing; pick one with --dataset_config_name from: ", join(names));
}

SplitFiles files_of_config(const json& config, const std::vector<std::string>& files,
                           const std::string& where, bool partial) {
  const std::string name = config.contains("config_name") && config["config_name"].is_string()
                               ? config["config_name"].get<std::string>()
                               : "default";
  const std::string w = where + " config '" + name + "'";
  const std::string data_dir = config.contains("data_dir") && config["data_dir"].is_string()
                                   ? config["data_dir"].get<std::string>()
                                   : "";
  SplitFiles out;
  if (!config.contains("data_files") || config["data_files"].is_null()) {
    // A config with only data_dir: the default patterns inside it.
    std::vector<std::string> inside;
    for (const auto& f : files)
      if (data_dir.empty() || f.rfind(data_dir + "/", 0) == 0)
        inside.push_back(data_dir.empty() ? f : f.substr(data_dir.size() + 1));
    out = default_split_files(inside);
    for (auto& [split, list] : out)
      for (auto& f : list) f = data_dir.empty() ? f : data_dir + "/" + f;
    CT_CHECK(!out.empty(), w, ": no data files", data_dir.empty() ? "" : " under " + data_dir);
    return out;
  }
  const json& df = config["data_files"];
  if (df.is_string() || (df.is_array() && !df.empty() && df[0].is_string())) {
    out.emplace_back("train", expand(patterns_of(df, w), files, data_dir, w, "train", partial));
  } else if (df.is_array()) {
    for (const auto& e : df) {
      CT_CHECK(e.is_object() && e.contains("split") && e.contains("path"), w,
               ": data_files entries must be {split, path}");
      const std::string split = e["split"].get<std::string>();
      out.emplace_back(split, expand(patterns_of(e["path"], w), files, data_dir, w, split, partial));
    }
  } else if (df.is_object()) {
    for (auto it = df.begin(); it != df.end(); ++it)
      out.emplace_back(it.key(), expand(patterns_of(it.value(), w), files, data_dir, w, it.key(), partial));
  } else {
    fail(w, ": data_files is ", df.type_name(), ", expected a string, a list or a mapping");
  }
  if (partial)
    out.erase(std::remove_if(out.begin(), out.end(), [](const auto& s) { return s.second.empty(); }),
              out.end());
  return out;
}

SplitFiles default_split_files(const std::vector<std::string>& all) {
  std::vector<std::string> files;
  for (const auto& f : all)
    if (is_data_file(f)) files.push_back(f);
  std::sort(files.begin(), files.end());
  SplitFiles out;
  auto add = [&](const std::string& split, const std::string& f) {
    for (auto& [s, list] : out)
      if (s == split) return list.push_back(f);
    out.emplace_back(split, std::vector<std::string>{f});
  };
  // 1. data/{split}-NNNNN-of-NNNNN*.*: any split name.
  static const std::regex sharded(R"(data/([A-Za-z0-9_.]+?)-\d{5}-of-\d{5}[^/]*\.[^/]+)");
  for (const auto& f : files) {
    std::smatch m;
    if (std::regex_match(f, m, sharded)) add(m[1], f);
  }
  if (!out.empty()) {
    // datasets' order: train, validation, test, then the others by name.
    auto rank = [](const std::string& s) {
      return s == "train" ? 0 : s == "validation" ? 1 : s == "test" ? 2 : 3;
    };
    std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
      return rank(a.first) != rank(b.first) ? rank(a.first) < rank(b.first)
                                            : (rank(a.first) == 3 && a.first < b.first);
    });
    return out;
  }
  // 2. Split keywords as a folder name or a file-name word (datasets' keyword patterns with separators
  //    [-._ 0-9/]); train, then validation, then test.
  static const std::pair<const char*, std::vector<std::string>> keywords[] = {
      {"train", {"train", "training"}},
      {"validation", {"validation", "valid", "dev", "val"}},
      {"test", {"test", "testing", "eval", "evaluation"}},
  };
  auto is_sep = [](char c) { return c == '-' || c == '.' || c == '_' || c == ' ' || (c >= '0' && c <= '9'); };
  auto has_word = [&](const std::string& path, const std::string& kw) {
    const auto parts = split_path(path);
    for (size_t k = 0; k < parts.size(); ++k) {
      const std::string& p = parts[k];
      if (k + 1 < parts.size() && p == kw) return true;  // a folder named for the split
      for (size_t at = p.find(kw); at != std::string::npos; at = p.find(kw, at + 1)) {
        const bool left = at == 0 || is_sep(p[at - 1]);
        const bool right = at + kw.size() < p.size() && is_sep(p[at + kw.size()]);
        if (left && right) return true;
      }
    }
    return false;
  };
  for (const auto& [split, kws] : keywords)
    for (const auto& f : files)
      for (const auto& kw : kws)
        if (has_word(f, kw)) {
          add(split, f);
          break;
        }
  if (!out.empty()) return out;
  for (const auto& f : files) add("train", f);
  return out;
}

}  // namespace ct::data

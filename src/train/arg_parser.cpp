#include "train/arg_parser.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/fs.h"

namespace ct::train {
namespace {

bool parse_bool_word(const std::string& v, bool* out) {
  std::string s;
  for (char ch : v) s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (s == "true" || s == "yes" || s == "t" || s == "y" || s == "1") return *out = true, true;
  if (s == "false" || s == "no" || s == "f" || s == "n" || s == "0") return *out = false, true;
  return false;
}

bool is_flag_token(const std::string& s) {
  if (s.size() < 2 || s[0] != '-') return false;
  // A negative number is a value, not a flag.
  char c = s[1];
  return !(std::isdigit(static_cast<unsigned char>(c)) || c == '.');
}

std::string none_if_unset(const std::string& s) {
  return s.empty() || s == "-1" ? "None" : s;
}

}  // namespace

void ArgParser::put(Flag f) {
  CT_ASSERT(!index_.count(f.name));
  index_[f.name] = flags_.size();
  flags_.push_back(std::move(f));
}

void ArgParser::add(const std::string& n, std::string* p, const std::string& h,
                    std::vector<std::string> choices) {
  put({n, Kind::str, p, h, std::move(choices), "", "", none_if_unset(*p)});
}
void ArgParser::add(const std::string& n, int64_t* p, const std::string& h) {
  put({n, Kind::integer, p, h, {}, "", "", none_if_unset(std::to_string(*p))});
}
void ArgParser::add(const std::string& n, double* p, const std::string& h) {
  put({n, Kind::real, p, h, {}, "", "", none_if_unset(str(*p))});
}
void ArgParser::add(const std::string& n, bool* p, const std::string& h) {
  put({n, Kind::boolean, p, h, {}, "", "", *p ? "true" : "false"});
}
void ArgParser::add(const std::string& n, std::optional<bool>* p, const std::string& h) {
  put({n, Kind::optional_boolean, p, h, {}, "", "", !p->has_value() ? "None" : **p ? "true" : "false"});
}
void ArgParser::add_alias(const std::string& n, const std::string& of, const std::string& note) {
  put({n, Kind::str, nullptr, "", {}, of, note, ""});
}

const ArgParser::Flag* ArgParser::find(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) return nullptr;
  const Flag& f = flags_[it->second];
  if (!f.alias_of.empty()) return &flags_[index_.at(f.alias_of)];
  return &f;
}

void ArgParser::set_value(const Flag& f, const std::string& value) const {
  const std::string flag = "--" + f.name;
  switch (f.kind) {
    case Kind::str: {
      if (!f.choices.empty()) {
        bool ok = false;
        std::string all;
        for (const auto& c : f.choices) {
          ok |= c == value;
          all += (all.empty() ? "" : "|") + c;
        }
        if (!ok && f.name == "ddp_backend" &&
            (value == "nccl" || value == "hccl" || value == "smddp" || value == "cncl" || value == "mccl"))
          fail(flag, ": '", value, "' is an accelerator backend; coretrain trains on CPUs: use ", all);
        if (!ok) fail(flag, ": expected one of ", all, ", got '", value, "'");
      }
      *static_cast<std::string*>(f.target) = value;
      return;
    }
    case Kind::integer: {
      errno = 0;
      char* end = nullptr;
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno == ERANGE)
        fail(flag, ": expected an integer, got '", value, "'");
      *static_cast<int64_t*>(f.target) = v;
      return;
    }
    case Kind::real: {
      errno = 0;
      char* end = nullptr;
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
        fail(flag, ": expected a number, got '", value, "'");
      *static_cast<double*>(f.target) = v;
      return;
    }
    case Kind::boolean:
    case Kind::optional_boolean: {
      bool b;
      if (!parse_bool_word(value, &b)) fail(flag, ": expected true or false, got '", value, "'");
      set_bool(f, b);
      return;
    }
  }
}

void ArgParser::set_bool(const Flag& f, bool value) {
  if (f.kind == Kind::boolean)
    *static_cast<bool*>(f.target) = value;
  else
    *static_cast<std::optional<bool>*>(f.target) = value;
}

void ArgParser::parse_argv(const std::vector<std::string>& argv, std::vector<std::string>* notes,
                           bool* help) const {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& tok = argv[i];
    if (tok == "--help" || tok == "-h") {
      *help = true;
      continue;
    }
    if (tok.rfind("--", 0) != 0) fail("unexpected argument '", tok, "' (flags are --name value)");
    std::string name = tok.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    // argparse accepts dashes for underscores in HfArgumentParser (it registers both spellings).
    for (char& ch : name)
      if (ch == '-') ch = '_';
    const Flag* f = find(name);
    if (!f && name.rfind("no_", 0) == 0) {
      // `--no_<flag>` for bools that default to true (HfArgumentParser adds these).
      const Flag* base = find(name.substr(3));
      if (base && is_bool(*base)) {
        if (has_value) fail("--", name, ": takes no value");
        set_bool(*base, false);
        given_.insert(base->name);
        continue;
      }
    }
    if (!f) fail("unknown flag --", name, " (see `coretrain ", command_, " --help`)");
    if (is_bool(*f) && !has_value) {
      // Bare, or followed by an explicit true/false word.
      bool b;
      if (i + 1 < argv.size() && parse_bool_word(argv[i + 1], &b)) {
        set_bool(*f, b);
        ++i;
      } else {
        set_bool(*f, true);
      }
    } else {
      if (!has_value) {
        if (i + 1 >= argv.size() || is_flag_token(argv[i + 1])) fail("--", name, ": expects a value");
        value = argv[++i];
      }
      set_value(*f, value);
    }
    given_.insert(f->name);
    const Flag& given = flags_[index_.at(name)];
    if (!given.note.empty() && notes) notes->push_back(given.note);
  }
}

void ArgParser::parse_json(const std::string& path) const {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(fs::read_file(path));
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": not valid JSON (", e.what(), ")");
  }
  if (!j.is_object()) fail(path, ": expected a JSON object of flag names to values");
  for (const auto& [key, v] : j.items()) {
    const Flag* f = find(key);
    if (!f) fail(path, ": unknown flag '", key, "'");
    if (v.is_null()) continue;  // None keeps the default
    std::string text;
    if (v.is_string()) {
      text = v.get<std::string>();
    } else if (v.is_boolean()) {
      text = v.get<bool>() ? "true" : "false";
    } else if (v.is_number_integer()) {
      text = std::to_string(v.get<int64_t>());
    } else if (v.is_number()) {
      std::ostringstream s;
      s.precision(17);
      s << v.get<double>();
      text = s.str();
    } else {
      fail(path, ": flag '", key, "' has a value of the wrong type (", v.type_name(), ")");
    }
    given_.insert(f->name);
    try {
      set_value(*f, text);
    } catch (const Error& e) {
      fail(path, ": ", e.what());
    }
  }
}

bool ArgParser::parse(const std::vector<std::string>& argv, std::vector<std::string>* notes) const {
  bool help = false;
  given_.clear();
  if (argv.size() == 1 && argv[0].size() > 5 && argv[0].compare(argv[0].size() - 5, 5, ".json") == 0)
    parse_json(argv[0]);
  else
    parse_argv(argv, notes, &help);
  return !help;
}

std::string ArgParser::help(const std::string& header) const {
  std::ostringstream s;
  s << header;
  for (const auto& f : flags_) {
    if (!f.alias_of.empty()) {
      s << "  --" << f.name << "  (old name of --" << f.alias_of << ")\n";
      continue;
    }
    s << "  --" << f.name << " (default: " << f.default_text << ")  " << f.help << "\n";
  }
  return s.str();
}

}  // namespace ct::train

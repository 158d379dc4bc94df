// The flag parser every command shares, with HfArgumentParser's conventions: `--flag value`, `--flag=value`,
// dashes for underscores, bare bools or `--flag true|false`, `--no_<flag>` for bools, a single `.json`
// argument as the whole set (null keeps a default), old names as aliases. Flags point into the caller's
// argument structs; whatever they hold when registered is the default --help prints. Every rejected value
// throws ct::Error naming the flag (or the JSON file and key).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ct::train {

class ArgParser {
 public:
  // `command` names the subcommand in messages ("see `coretrain glue --help`").
  explicit ArgParser(std::string command) : command_(std::move(command)) {}

  void add(const std::string& name, std::string* target, const std::string& help,
           std::vector<std::string> choices = {});
  void add(const std::string& name, int64_t* target, const std::string& help);
  void add(const std::string& name, double* target, const std::string& help);
  void add(const std::string& name, bool* target, const std::string& help);
  // HF's Optional[bool]: None (unset) unless given.
  void add(const std::string& name, std::optional<bool>* target, const std::string& help);
  // `name` sets `of` (an old spelling); `note`, when not empty, is recorded each time the old name is used.
  void add_alias(const std::string& name, const std::string& of, const std::string& note = "");

  // Fills the targets from argv (program and subcommand excluded). Returns false when --help was given.
  // Lines about accepted-but-renamed flags are appended to `notes`.
  bool parse(const std::vector<std::string>& argv, std::vector<std::string>* notes) const;

  // Whether the last parse set flag `name` (its own name, not an alias): on the command line, as --no_<name>,
  // or as a non-null key of a JSON argv.
  bool given(const std::string& name) const { return given_.count(name) > 0; }

  // One line per flag: name, the default (the registered value, None for empty or -1), help.
  std::string help(const std::string& header) const;

  const std::string& command() const { return command_; }

 private:
  enum class Kind { str, integer, real, boolean, optional_boolean };
  struct Flag {
    std::string name;
    Kind kind;
    void* target;
    std::string help;
    std::vector<std::string> choices;  // strings: the accepted values (empty: any)
    std::string alias_of, note;
    std::string default_text;  // as --help prints it
  };

  void put(Flag f);
  const Flag* find(const std::string& name) const;
  void set_value(const Flag& f, const std::string& value) const;
  static void set_bool(const Flag& f, bool value);
  static bool is_bool(const Flag& f) { return f.kind == Kind::boolean || f.kind == Kind::optional_boolean; }
  void parse_argv(const std::vector<std::string>& argv, std::vector<std::string>* notes, bool* help) const;
  void parse_json(const std::string& path) const;

  std::string command_;
  std::vector<Flag> flags_;
  std::map<std::string, size_t> index_;
  mutable std::set<std::string> given_;
};

}  // namespace ct::train

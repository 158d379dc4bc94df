// Subcommands of the one executable. Each lives in its own file in apps/ and registers itself, so adding one
// touches no shared table: CT_COMMAND("bench step", "time BERT training steps", run_bench_step);
#pragma once

#include <functional>
#include <map>
#include <string>

namespace ct::app {

using CommandFn = std::function<int(int argc, char** argv)>;

struct Command {
  std::string summary;
  CommandFn run;
};

std::map<std::string, Command>& commands();

struct Registrar {
  Registrar(const std::string& name, const std::string& summary, CommandFn fn) {
    commands()[name] = Command{summary, std::move(fn)};
  }
};

}  // namespace ct::app

#define CT_COMMAND_CAT2(a, b) a##b
#define CT_COMMAND_CAT(a, b) CT_COMMAND_CAT2(a, b)
#define CT_COMMAND(name, summary, fn) \
  static ::ct::app::Registrar CT_COMMAND_CAT(ct_command_registrar_, __LINE__)(name, summary, fn)

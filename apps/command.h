// Subcommands of the one executable. Each lives in its own file in apps/ and registers itself, so adding one
// touches no shared table: CT_COMMAND("bench step", "time BERT training steps", run_bench_step);
#pragma once

#include <exception>
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

// Prints "coretrain <name>: error: <what>" to stderr (flushed) and writes the torchelastic error file;
// returns 1. main() does this for every command; a command that holds a communicator calls it itself before
// the communicator goes, since tearing one down under mpiexec may end the process (MPI_Abort) before main
// prints.
int report_error(const std::string& name, const std::exception& e);

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

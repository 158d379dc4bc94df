// coretrain: one executable, subcommands registered by the files beside this one. Errors from any layer
// arrive here as ct::Error and leave as one line on stderr with a non-zero exit (and, under an elastic agent
// that sets TORCHELASTIC_ERROR_FILE, as torchelastic's JSON error file).
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <typeinfo>

#include "apps/command.h"
#include "core/error.h"
#include "train/error_file.h"

namespace ct::app {

std::map<std::string, Command>& commands() {
  static std::map<std::string, Command> table;
  return table;
}

namespace {

void usage(FILE* out) {
  std::fprintf(out, "usage: coretrain <command> [flags]\n\ncommands:\n");
  for (const auto& [name, cmd] : commands())
    std::fprintf(out, "  %-14s %s\n", name.c_str(), cmd.summary.c_str());
  std::fprintf(out, "\n`coretrain <command> --help` lists a command's flags.\n");
}

std::string demangled(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : name;
  std::free(d);
  return out;
}

}  // namespace

// The error line on stderr, and the same in TORCHELASTIC_ERROR_FILE when an elastic agent asked for it.
int report_error(const std::string& name, const std::exception& e) {
  const std::string type = dynamic_cast<const ct::Error*>(&e) ? "ct::Error" : demangled(typeid(e).name());
  const std::string line = "coretrain " + name + ": error: " + e.what();
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  ct::train::write_torchelastic_error_file(type, e.what(), line + "\n");
  return 1;
}

}  // namespace ct::app

int main(int argc, char** argv) {
  using namespace ct::app;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  // Two-word commands ("bench step") take precedence over one-word ones.
  std::string name = argv[1];
  int consumed = 1;
  if (argc >= 3 && commands().count(name + " " + argv[2])) {
    name += std::string(" ") + argv[2];
    consumed = 2;
  }
  auto it = commands().find(name);
  if (it == commands().end()) {
    std::fprintf(stderr, "coretrain: error: unknown command '%s'\n", name.c_str());
    usage(stderr);
    return 2;
  }
  try {
    // The command sees argv[0] = "coretrain <name>" and its own flags.
    std::string prog = "coretrain " + name;
    argv[consumed] = prog.data();
    return it->second.run(argc - consumed, argv + consumed);
  } catch (const std::exception& e) {
    return ct::app::report_error(name, e);
  }
}

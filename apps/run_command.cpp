// `coretrain run`: torchrun's launcher for coretrain's own commands (or any program). The agent lives in
// src/launch; this file only parses and hands over.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "apps/command.h"
#include "launch/agent.h"
#include "launch/launch_args.h"

namespace {

int run_run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(ct::launch::launch_usage().c_str(), args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  auto env = [](const char* k) { return static_cast<const char*>(std::getenv(k)); };
  ct::launch::LaunchArgs parsed = ct::launch::parse_launch_args(args, env);
  auto host = ct::launch::AgentHost::current(
      [](const std::string& name) { return name != "run" && ct::app::commands().count(name) > 0; });
  return ct::launch::run_agent(parsed, host);
}

}  // namespace

CT_COMMAND("run", "torchrun-compatible elastic launcher: `coretrain run --nproc-per-node 2 qa ...`", run_run);

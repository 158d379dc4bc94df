// The elastic agent behind `coretrain run`: hosts or reaches the rendezvous store, joins rounds, starts this
// node's workers with torchrun's environment, watches them and the round, restarts the group on failure (up
// to
// --max-restarts), on a lost node or when a node waits to join, forwards SIGTERM/SIGINT/SIGHUP to the
// workers, and at the end prints torchrun's failure summary (root cause first) and exits with the root
// cause's code.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "launch/launch_args.h"
#include "launch/rendezvous.h"

namespace ct::launch {

// What the agent knows of this machine and process (tests give their own).
struct AgentHost {
  std::string hostname;
  int cpus = 1;        // CPUs in this process's affinity mask
  int numa_nodes = 1;  // /sys/devices/system/node
  std::string self_exe;
  // True when argv[0] names one of this executable's subcommands ("qa"): the worker runs self_exe argv...
  std::function<bool(const std::string&)> is_subcommand;
  EnvLookup env;
  std::vector<std::string> environ;  // the agent's environment, inherited by workers
  static AgentHost current(std::function<bool(const std::string&)> is_subcommand);
};

// The environment torchrun gives local rank `local_rank` of node `round.group_rank` (plus coretrain's
// CORETRAIN_RDZV_ROUND, and OMP_NUM_THREADS when the agent's environment has none), as NAME -> value.
std::map<std::string, std::string> worker_env(const LaunchArgs& args, const Round& round, int local_rank,
                                              const std::string& master_addr, int master_port,
                                              const std::string& error_file, int omp_threads);

// The program and arguments a worker runs: `qa ...` and `coretrain qa ...` run this executable; a .py script
// runs under python3 unless --no-python; anything else is looked up in PATH. Throws naming what is missing.
std::vector<std::string> resolve_worker_command(const LaunchArgs& args, const AgentHost& host);

// torchrun's failure summary for the job's failures (root cause = the earliest).
std::string failure_summary(const std::string& name, const std::vector<FailureRecord>& failures);

// Runs the agent to the end; returns the process exit code.
int run_agent(const LaunchArgs& args, const AgentHost& host);

}  // namespace ct::launch

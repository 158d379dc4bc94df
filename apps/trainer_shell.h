// What every training command (qa, glue, classification, ner, mlm, swag) does around its script's main():
// stop signals before any thread starts, the communicator from the launch environment (--ddp_backend picks
// the collectives, --ddp_timeout bounds every wait), HF's log_level_replica, the thread plan and the rank map
// in the log, and the error reported while the communicator still lives. SIGTERM/SIGINT during training stop
// every rank after the same step with a checkpoint (exit 128 + signal).
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "train/dist_context.h"
#include "train/stop_signal.h"
#include "train/task_runner.h"
#include "train/training_args.h"

namespace ct::app {

// The communicator a run's TrainingArguments ask for (CORETRAIN_COMM_TIMEOUT overrides --ddp_timeout).
std::unique_ptr<comm::Communicator> communicator_for(const train::TrainingArguments& t);

// Sets up the process for `t` and runs `main` with its DistContext; returns the exit status (0, 1 on an
// error reported as "coretrain <name>: error: ...", 128 + signal on a graceful stop).
int run_training_command(const std::string& name, train::TrainingArguments& t,
                         const std::function<train::RunResult(const train::DistContext&)>& main,
                         train::RunResult* result = nullptr);

// A script command whole: stop signals before any thread starts (every thread inherits the blocked mask), the
// script's flags (--help prints them with HF's defaults), then its main() under run_training_command.
template <class Parsed>
int run_script_command(const std::string& name, int argc, char** argv,
                       Parsed (*parse)(const std::vector<std::string>&), std::string (*help)(),
                       train::RunResult (*main)(Parsed, const std::vector<std::string>&,
                                                const train::DistContext&)) {
  train::install_stop_signals();
  const std::vector<std::string> args(argv + 1, argv + argc);
  Parsed parsed = parse(args);
  if (parsed.help) {
    std::fputs(help().c_str(), stdout);
    return 0;
  }
  return run_training_command(name, parsed.training, [&](const train::DistContext& dist) {
    return main(std::move(parsed), args, dist);
  });
}

}  // namespace ct::app

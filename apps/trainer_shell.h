// What every training command (qa, glue, classification, ner, mlm, swag) does around its script's main():
// stop signals before any thread starts, the communicator from the launch environment (--ddp_backend picks
// the collectives, --ddp_timeout bounds every wait), HF's log_level_replica, the thread plan and the rank map
// in the log, and the error reported while the communicator still lives. SIGTERM/SIGINT during training stop
// every rank after the same step with a checkpoint (exit 128 + signal).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "comm/communicator.h"
#include "train/dist_context.h"
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

}  // namespace ct::app

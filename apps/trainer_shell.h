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
#include "tasks/script_args.h"
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

// The demo's batch is a global batch: with N ranks each takes 1/N of it (when `global` and N divides it).
void split_demo_batch(int64_t& per_device_train_batch_size, bool global, const train::DistContext& dist);

// Runs `write` on each node's local rank 0 while the node's other ranks wait; an error there fails every
// rank. Collective.
void on_node_writer(const train::DistContext& dist, const std::function<void()>& write);

// The demo's closing lines on rank 0: throughput and communication, then `metric` (unless empty) on the
// held-out set.
void print_demo_result(const train::RunResult& result, const std::string& metric);

// A script command whole: stop signals before any thread starts (every thread inherits the blocked mask), the
// script's flags (--help prints them with HF's defaults), then its main() under run_training_command. With
// --demo, the demo's files are written first and its metric printed last.
template <class Data>
int run_script_command(const std::string& name, int argc, char** argv,
                       tasks::ScriptArguments<Data> (*parse)(const std::vector<std::string>&),
                       std::string (*help)(),
                       train::RunResult (*main)(tasks::ScriptArguments<Data>, const std::vector<std::string>&,
                                                const train::DistContext&),
                       const tasks::TaskDemo<Data>* demo = nullptr) {
  train::install_stop_signals();
  const std::vector<std::string> args(argv + 1, argv + argc);
  tasks::ScriptArguments<Data> parsed = parse(args);
  if (parsed.help) {
    std::fputs(help().c_str(), stdout);
    return 0;
  }
  const bool demo_run = demo && parsed.demo;
  train::RunResult result;
  int rank = 0;
  const int status = run_training_command(
      name, parsed.training,
      [&](const train::DistContext& dist) {
        rank = dist.rank;
        if (demo_run) {
          split_demo_batch(parsed.training.per_device_train_batch_size, parsed.demo_global_batch, dist);
          on_node_writer(dist, [&] { demo->write(parsed, tasks::demo_folder(parsed.training)); });
        }
        return main(std::move(parsed), args, dist);
      },
      &result);
  if (status == 0 && demo_run && rank == 0) print_demo_result(result, demo->metric);
  return status;
}

}  // namespace ct::app

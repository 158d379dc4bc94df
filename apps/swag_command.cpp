// `coretrain swag`: HF run_swag.py's command line (same flags, same output folder): SWAG from the Hub
// (allenai/swag, configuration "regular") or local csv/json files with its columns, trained and evaluated
// with a multiple-choice head, data-parallel under mpirun or a torchrun-style environment.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/command.h"
#include "apps/trainer_shell.h"
#include "tasks/multiple_choice/run_swag.h"
#include "tasks/multiple_choice/swag_args.h"
#include "train/stop_signal.h"

namespace {

int run_swag_command(int argc, char** argv) {
  // Before any thread starts (communicator workers, OpenMP, oneDNN): every thread inherits the blocked mask.
  ct::train::install_stop_signals();
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = ct::tasks::parse_swag_args(args);
  if (parsed.help) {
    std::fputs(ct::tasks::swag_args_help().c_str(), stdout);
    return 0;
  }
  return ct::app::run_training_command("swag", parsed.training, [&](const ct::train::DistContext& dist) {
    return ct::tasks::run_swag(std::move(parsed), args, dist);
  });
}

}  // namespace

CT_COMMAND("swag", "fine-tune multiple choice on SWAG or csv/json files with run_swag.py's flags",
           run_swag_command);

// `coretrain classification`: HF run_classification.py's command line (same flags, same output folder): text
// classification from any columns of a Hub dataset or local csv/json files, single-label, multi-label (list
// labels) or regression, data-parallel under mpirun or a torchrun-style environment.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/command.h"
#include "apps/trainer_shell.h"
#include "tasks/sequence_classification/classification_args.h"
#include "tasks/sequence_classification/run_classification.h"
#include "train/stop_signal.h"

namespace {

int run_classification_command(int argc, char** argv) {
  // Before any thread starts (communicator workers, OpenMP, oneDNN): every thread inherits the blocked mask.
  ct::train::install_stop_signals();
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = ct::tasks::parse_classification_args(args);
  if (parsed.help) {
    std::fputs(ct::tasks::classification_args_help().c_str(), stdout);
    return 0;
  }
  return ct::app::run_training_command("classification", parsed.training,
                                       [&](const ct::train::DistContext& dist) {
                                         return ct::tasks::run_classification(std::move(parsed), args, dist);
                                       });
}

}  // namespace

CT_COMMAND("classification",
           "fine-tune text classification (single-label, multi-label, regression) with "
           "run_classification.py's flags",
           run_classification_command);

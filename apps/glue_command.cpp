// `coretrain glue`: HF run_glue.py's command line (same flags, same output folder): a GLUE task from the
// Hub (--task_name), another Hub dataset (--dataset_name) or local csv/json files, trained and evaluated
// with a sequence-classification head, data-parallel under mpirun or a torchrun-style environment.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/command.h"
#include "apps/trainer_shell.h"
#include "tasks/sequence_classification/glue_args.h"
#include "tasks/sequence_classification/run_glue.h"
#include "train/stop_signal.h"

namespace {

int run_glue_command(int argc, char** argv) {
  // Before any thread starts (communicator workers, OpenMP, oneDNN): every thread inherits the blocked mask.
  ct::train::install_stop_signals();
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = ct::tasks::parse_glue_args(args);
  if (parsed.help) {
    std::fputs(ct::tasks::glue_args_help().c_str(), stdout);
    return 0;
  }
  return ct::app::run_training_command("glue", parsed.training, [&](const ct::train::DistContext& dist) {
    return ct::tasks::run_glue(std::move(parsed), args, dist);
  });
}

}  // namespace

CT_COMMAND("glue", "fine-tune sequence classification on GLUE or csv/json files with run_glue.py's flags",
           run_glue_command);

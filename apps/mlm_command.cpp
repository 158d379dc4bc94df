// `coretrain mlm`: HF run_mlm.py's command line (same flags, same output folder): a Hub dataset
// (--dataset_name wikitext --dataset_config_name wikitext-2-raw-v1) or local txt/csv/json files, masked
// language modelling from a checkpoint or from scratch (--model_type + --config_overrides), data-parallel
// under mpirun or a torchrun-style environment.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/command.h"
#include "apps/trainer_shell.h"
#include "tasks/masked_lm/mlm_args.h"
#include "tasks/masked_lm/run_mlm.h"
#include "train/stop_signal.h"

namespace {

int run_mlm_command(int argc, char** argv) {
  // Before any thread starts (communicator workers, OpenMP, oneDNN): every thread inherits the blocked mask.
  ct::train::install_stop_signals();
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = ct::tasks::parse_mlm_args(args);
  if (parsed.help) {
    std::fputs(ct::tasks::mlm_args_help().c_str(), stdout);
    return 0;
  }
  return ct::app::run_training_command("mlm", parsed.training, [&](const ct::train::DistContext& dist) {
    return ct::tasks::run_mlm(std::move(parsed), args, dist);
  });
}

}  // namespace

CT_COMMAND("mlm", "masked language modelling on a Hub dataset or txt/csv/json files with run_mlm.py's flags",
           run_mlm_command);

// `coretrain ner`: HF run_ner.py's command line (same flags, same output folder): token classification
// (NER, POS, chunking) on a Hub dataset (conll2003 and the like) or local csv/json files with a list of words
// and a list of tags per row, data-parallel under mpirun or a torchrun-style environment.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/command.h"
#include "apps/trainer_shell.h"
#include "tasks/token_classification/ner_args.h"
#include "tasks/token_classification/run_ner.h"
#include "train/stop_signal.h"

namespace {

int run_ner_command(int argc, char** argv) {
  // Before any thread starts (communicator workers, OpenMP, oneDNN): every thread inherits the blocked mask.
  ct::train::install_stop_signals();
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = ct::tasks::parse_ner_args(args);
  if (parsed.help) {
    std::fputs(ct::tasks::ner_args_help().c_str(), stdout);
    return 0;
  }
  return ct::app::run_training_command("ner", parsed.training, [&](const ct::train::DistContext& dist) {
    return ct::tasks::run_ner(std::move(parsed), args, dist);
  });
}

}  // namespace

CT_COMMAND("ner", "fine-tune token classification (NER, POS, chunking) with run_ner.py's flags",
           run_ner_command);

// `coretrain classification`: HF run_classification.py's command line (same flags, same output folder): text
// classification from any columns of a Hub dataset or local csv/json files, single-label, multi-label (list
// labels) or regression, data-parallel under mpirun or a torchrun-style environment.
#include "apps/command.h"
#include "apps/trainer_shell.h"
#include "tasks/sequence_classification/classification_args.h"
#include "tasks/sequence_classification/run_classification.h"
#include "tasks/sequence_classification/sequence_demo.h"

namespace {

int run_classification_command(int argc, char** argv) {
  return ct::app::run_script_command("classification", argc, argv, ct::tasks::parse_classification_args,
                                     ct::tasks::classification_args_help, ct::tasks::run_classification,
                                     &ct::tasks::classification_demo());
}

}  // namespace

CT_COMMAND("classification",
           "fine-tune text classification (single-label, multi-label, regression) with "
           "run_classification.py's flags (--demo: built-in demo)",
           run_classification_command);

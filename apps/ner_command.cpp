// `coretrain ner`: HF run_ner.py's command line (same flags, same output folder): token classification
// (NER, POS, chunking) on a Hub dataset (conll2003 and the like) or local csv/json files with a list of words
// and a list of tags per row, data-parallel under mpirun or a torchrun-style environment.
#include "apps/command.h"
#include "apps/trainer_shell.h"
#include "tasks/token_classification/ner_args.h"
#include "tasks/token_classification/ner_demo.h"
#include "tasks/token_classification/run_ner.h"

namespace {

int run_ner_command(int argc, char** argv) {
  return ct::app::run_script_command("ner", argc, argv, ct::tasks::parse_ner_args, ct::tasks::ner_args_help,
                                     ct::tasks::run_ner, &ct::tasks::ner_demo());
}

}  // namespace

CT_COMMAND(
    "ner",
    "fine-tune token classification (NER, POS, chunking) with run_ner.py's flags (--demo: built-in demo)",
    run_ner_command);

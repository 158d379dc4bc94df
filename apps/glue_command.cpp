// `coretrain glue`: HF run_glue.py's command line (same flags, same output folder): a GLUE task from the
// Hub (--task_name), another Hub dataset (--dataset_name) or local csv/json files, trained and evaluated
// with a sequence-classification head, data-parallel under mpirun or a torchrun-style environment.
#include "apps/command.h"
#include "apps/trainer_shell.h"
#include "tasks/sequence_classification/glue_args.h"
#include "tasks/sequence_classification/run_glue.h"
#include "tasks/sequence_classification/sequence_demo.h"

namespace {

int run_glue_command(int argc, char** argv) {
  return ct::app::run_script_command("glue", argc, argv, ct::tasks::parse_glue_args,
                                     ct::tasks::glue_args_help, ct::tasks::run_glue, &ct::tasks::glue_demo());
}

}  // namespace

CT_COMMAND("glue",
           "fine-tune sequence classification on GLUE or csv/json files with run_glue.py's flags (--demo: "
           "built-in demo)",
           run_glue_command);

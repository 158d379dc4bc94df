// `coretrain swag`: HF run_swag.py's command line (same flags, same output folder): SWAG from the Hub
// (allenai/swag, configuration "regular") or local csv/json files with its columns, trained and evaluated
// with a multiple-choice head, data-parallel under mpirun or a torchrun-style environment.
#include "apps/command.h"
#include "apps/trainer_shell.h"
#include "tasks/multiple_choice/run_swag.h"
#include "tasks/multiple_choice/swag_args.h"
#include "tasks/multiple_choice/swag_demo.h"

namespace {

int run_swag_command(int argc, char** argv) {
  return ct::app::run_script_command("swag", argc, argv, ct::tasks::parse_swag_args,
                                     ct::tasks::swag_args_help, ct::tasks::run_swag, &ct::tasks::swag_demo());
}

}  // namespace

CT_COMMAND(
    "swag",
    "fine-tune multiple choice on SWAG or csv/json files with run_swag.py's flags (--demo: built-in demo)",
    run_swag_command);

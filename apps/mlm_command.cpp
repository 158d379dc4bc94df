// `coretrain mlm`: HF run_mlm.py's command line (same flags, same output folder): a Hub dataset
// (--dataset_name wikitext --dataset_config_name wikitext-2-raw-v1) or local txt/csv/json files, masked
// language modelling from a checkpoint or from scratch (--model_type + --config_overrides), data-parallel
// under mpirun or a torchrun-style environment.
#include "apps/command.h"
#include "apps/trainer_shell.h"
#include "tasks/masked_lm/mlm_args.h"
#include "tasks/masked_lm/mlm_demo.h"
#include "tasks/masked_lm/run_mlm.h"

namespace {

int run_mlm_command(int argc, char** argv) {
  return ct::app::run_script_command("mlm", argc, argv, ct::tasks::parse_mlm_args, ct::tasks::mlm_args_help,
                                     ct::tasks::run_mlm, &ct::tasks::mlm_demo());
}

}  // namespace

CT_COMMAND("mlm",
           "masked language modelling on a Hub dataset or txt/csv/json files with run_mlm.py's flags "
           "(--demo: built-in demo)",
           run_mlm_command);

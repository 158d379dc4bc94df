// `coretrain clm`: HF run_clm.py's command line (same flags, same output folder): a Hub dataset or local
// txt/csv/json files, causal language modelling of a decoder (Llama, Mistral, Qwen2/3, Gemma 3) from a model
// folder or from scratch (--model_type + --config_overrides), data-parallel under mpirun or a torchrun-style
// environment.
#include "apps/command.h"
#include "apps/trainer_shell.h"
#include "tasks/causal_lm/clm_args.h"
#include "tasks/causal_lm/clm_demo.h"
#include "tasks/causal_lm/run_clm.h"

namespace {

int run_clm_command(int argc, char** argv) {
  return ct::app::run_script_command("clm", argc, argv, ct::tasks::parse_clm_args, ct::tasks::clm_args_help,
                                     ct::tasks::run_clm, &ct::tasks::clm_demo());
}

}  // namespace

CT_COMMAND("clm",
           "causal language modelling of a decoder on a Hub dataset or txt/csv/json files with run_clm.py's "
           "flags (--demo: built-in demo)",
           run_clm_command);

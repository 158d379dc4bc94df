// `coretrain mlm --demo`: a counting corpus. Each line counts on from a random number word around a ring of
// twelve ("... eleven twelve one two ..."), so a masked word is the one after its left neighbour and before
// its right one; text files under <output_dir>/demo_data/, grouped into chunks as run_mlm does.
#pragma once

#include "tasks/masked_lm/mlm_args.h"

namespace ct::tasks {

const TaskDemo<MlmDataArguments>& mlm_demo();

}  // namespace ct::tasks

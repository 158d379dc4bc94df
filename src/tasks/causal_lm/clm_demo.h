// `coretrain clm --demo`: a generated language whose next word follows a rule. Each line counts on around a
// ring of twelve number words from a random start ("... eleven twelve one two ..."), so every word but a
// line's first is predictable from the one before; text files under <output_dir>/demo_data/, grouped into
// blocks as run_clm does, and a tiny Llama (a from-scratch config) learns it. The command prints the held-out
// perplexity against chance, the vocabulary size (a uniform guess).
#pragma once

#include "tasks/causal_lm/clm_args.h"

namespace ct::tasks {

const TaskDemo<ClmDataArguments>& clm_demo();

}  // namespace ct::tasks

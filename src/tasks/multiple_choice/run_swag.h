// run_swag.py's main(), in one call: the data (local csv/json files, else the Hub's swag, configuration
// "regular") -> SWAG's columns (sent1, sent2, ending0..ending3, label) as one pair per ending -> config,
// tokenizer and model with a multiple-choice head -> the Trainer's train / evaluate (accuracy) -> the output
// folder HF writes, with run_swag's model card. apps/swag_command.cpp is a thin shell around this.
#pragma once

#include <string>
#include <vector>

#include "tasks/multiple_choice/swag_args.h"
#include "train/dist_context.h"
#include "train/task_runner.h"

namespace ct::tasks {

// `argv`: the command line as given (every rank must have the same). Collective: every rank calls it.
train::RunResult run_swag(SwagArguments args, const std::vector<std::string>& argv,
                          const train::DistContext& dist = {});

// run_swag's max_seq_length: without the flag (`requested` <= 0) the tokenizer's model_max_length, capped at
// 1024 with HF's warning (no model_max_length counts as transformers' VERY_LARGE_INTEGER); with it,
// min(flag, model_max_length) with HF's warning. `warning` gets what HF logs ("" when nothing).
int64_t swag_max_seq_length(int64_t requested, int64_t model_max_length, std::string* warning);

}  // namespace ct::tasks

// run_glue.py's main(), in one call: the data (a GLUE task from the Hub's nyu-mll/glue, another Hub dataset,
// or local csv/json files) -> labels (ClassLabel names, or the sorted distinct values of local files; float
// labels mean a regression) -> config, tokenizer and model with a sequence-classification head (label
// order from the checkpoint's label2id when its names match the task's) -> features -> the Trainer's
// train / evaluate (MNLI: matched and mismatched, `_mm` keys) / predict (predict_results_{task}.txt) -> the
// output folder HF writes. apps/glue_command.cpp is a thin shell around this.
#pragma once

#include <string>
#include <vector>

#include "tasks/sequence_classification/glue_args.h"
#include "train/dist_context.h"
#include "train/task_runner.h"

namespace ct::tasks {

// `argv`: the command line as given (every rank must have the same). Collective: every rank calls it.
train::RunResult run_glue(GlueArguments args, const std::vector<std::string>& argv,
                          const train::DistContext& dist = {});

}  // namespace ct::tasks

// run_ner.py's main(), in one call: the data (a Hub dataset by name, or local csv/json files) -> the text
// and label columns (`tokens`, `{task_name}_tags`, else the first two) -> labels (ClassLabel names, or the
// sorted distinct tags) -> config, tokenizer (add_prefix_space for RoBERTa-style byte-level BPE, as
// transformers forces it) and model with a token-classification head (label order from the checkpoint's
// label2id when its names match) -> features aligned through word ids -> the Trainer's train / evaluate /
// predict (predictions.txt) with seqeval's metrics -> the output folder HF writes.
#pragma once

#include <string>
#include <vector>

#include "tasks/token_classification/ner_args.h"
#include "train/dist_context.h"
#include "train/task_runner.h"

namespace ct::tasks {

// `argv`: the command line as given (every rank must have the same). Collective: every rank calls it.
train::RunResult run_ner(NerArguments args, const std::vector<std::string>& argv,
                         const train::DistContext& dist = {});

}  // namespace ct::tasks

// run_mlm.py's main(), in one call: the texts (a Hub dataset such as wikitext wikitext-2-raw-v1, or local
// txt/csv/json files; the "text" column, else the first; train[:N%] held out when there is no validation
// split) -> config (a checkpoint's, or a fresh one of --model_type with --config_overrides) -> tokenizer and
// a masked-LM model -> features (every text tokenized then cut into max_seq_length chunks, or one example per
// non-blank line with --line_by_line) -> the Trainer's train / evaluate with dynamic masking, eval_loss,
// accuracy over the masked tokens and perplexity = exp(eval_loss) -> the output folder HF writes.
// apps/mlm_command.cpp is a thin shell around this.
#pragma once

#include <string>
#include <vector>

#include "model/config.h"
#include "tasks/masked_lm/mlm_args.h"
#include "train/dist_context.h"
#include "train/task_runner.h"

namespace ct::tasks {

// `argv`: the command line as given (every rank must have the same). Collective: every rank calls it.
train::RunResult run_mlm(MlmArguments args, const std::vector<std::string>& argv,
                         const train::DistContext& dist = {});

// CONFIG_MAPPING[model_type]() then config.update_from_string(overrides) ("k=v,k2=v2", each value typed as
// the default it replaces), for the model types and fields ModelConfig implements; anything else fails
// naming the flag and the key.
model::ModelConfig scratch_config(const std::string& model_type, const std::string& overrides);

}  // namespace ct::tasks

// run_clm.py's main(), in one call: the texts (a Hub dataset or local txt/csv/json files; the "text" column,
// else the first; train[:P%] held out when there is no validation split) -> config (a model folder's, or a
// fresh one of --model_type with --config_overrides) -> tokenizer and decoder (the embeddings resized when
// the tokenizer outgrows them) -> every text tokenized with its special tokens, no truncation, then
// group_texts' blocks of block_size per 1,000 texts -> the Trainer's train / evaluate with eval_loss,
// eval_accuracy (next-token argmax) and perplexity = exp(eval_loss) -> the output folder HF writes.
// apps/clm_command.cpp is a thin shell around this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tasks/causal_lm/clm_args.h"
#include "train/dist_context.h"
#include "train/task_runner.h"

namespace ct::tasks {

// `argv`: the command line as given (every rank must have the same). Collective: every rank calls it.
train::RunResult run_clm(ClmArguments args, const std::vector<std::string>& argv,
                         const train::DistContext& dist = {});

// run_clm's block_size: unset (`requested` <= 0) -> the tokenizer's model_max_length (0: none, i.e.
// VERY_LARGE_INTEGER), replaced with min(1024, max_positions) when it exceeds the model's max positions;
// set -> min(requested, model_max_length). `warnings` gets HF's lines (and one when the size is huge).
int64_t clm_block_size(int64_t requested, int64_t model_max_length, int64_t max_positions,
                       std::vector<std::string>* warnings);

}  // namespace ct::tasks

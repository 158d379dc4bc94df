// --dump_eval_features FILE for every task command: each eval feature's model inputs and labels as the eval
// loop collates them (its batches, in eval order; MLM's masks are the eval masks, keyed by seed and position,
// so the same every run), written for checking logits and losses against another implementation:
// {"features": [{"input_ids", "token_type_ids", "attention_mask", "labels"}]}. Padded rows keep their
// padding; a packed batch's rows come out at their own lengths with an all-ones mask. Labels are the row's
// per-token labels (token classification, masked LM), its class id or float values (sequence
// classification), or the example's answer (multiple choice: one feature per example, its choices' rows).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/sampler.h"
#include "train/task_split.h"

namespace ct::train {

void dump_eval_features(const std::string& path, const TaskSplit& split, int64_t eval_batch_size);
// --dump_train_features FILE: the same records for training `batches` of `epoch`, in the sampler's order,
// collated as the training loop collates them (MLM: that epoch's masks), for checking a step's gradient.
void dump_train_features(const std::string& path, const TaskSplit& split,
                         const std::vector<data::SampledBatch>& batches, uint64_t epoch);

}  // namespace ct::train

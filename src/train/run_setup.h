// What every example-script command does before its task touches data, in the order HF's scripts and the
// Trainer do it: the output folder's startup rule (last checkpoint, --overwrite_output_dir, elastic restarts)
// decided once by world process zero and shared, the same command line on every rank, the default
// --logging_dir stamped by rank 0's clock, and where a data-parallel job keeps its gradients (the node's
// shared segment, so each bucket's all-reduce works in place).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "train/dist_context.h"
#include "train/training_args.h"

namespace ct::train {

// Decides the checkpoint to resume from (empty: start fresh), creates output_dir and clears stale temporary
// checkpoints; rank 0 decides and every rank gets its decision or its error. Fails when the run has nothing
// to do. Collective.
std::string prepare_output_dir(const TrainingArguments& t, const DistContext& dist);

// Fails on every rank, naming the flags, when some rank's `args` (a description of its parsed command line,
// after defaults, minus what is naturally per process) differs from rank 0's. Collective.
void check_same_arguments(const nlohmann::json& args, const DistContext& dist);

// The command line as check_same_arguments compares it: {flag: value} (a bare flag: "true"; other arguments
// by position), without --local_rank / --local-rank, which torch.distributed.launch gives each process its
// own value of.
nlohmann::json command_line_json(const std::vector<std::string>& argv);

// HF v4's default --logging_dir (runs/<date>_<host>) when none was given, the same on every rank. Collective.
void resolve_logging_dir(TrainingArguments& t, const DistContext& dist);

// The three steps above in the example scripts' order, for a command whose ranks must share `argv`: returns
// the checkpoint to resume from. Collective.
// `notes` (flags taken under an old name, and the like) are logged first.
std::string begin_task_run(TrainingArguments& t, const std::vector<std::string>& argv,
                           const DistContext& dist, const std::vector<std::string>& notes = {});

// The gradient slab's allocator: the node's shared segment in a data-parallel job, none (the model owns
// its slab) alone.
std::function<float*(int64_t)> gradient_allocator(const DistContext& dist);

// Prints "***** {split} metrics *****" and one aligned line per metric, as HF's log_metrics.
void print_metrics(const std::string& split, const nlohmann::json& metrics);

}  // namespace ct::train

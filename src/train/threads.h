// How many OpenMP threads each rank runs. OMP_NUM_THREADS wins when set (mpirun -genv, torchrun). Otherwise
// a rank takes its share of the cores its node gives the job (the process's CPU affinity mask), less the
// cores pinned to comm workers (CCL_WORKER_AFFINITY), instead of the runtime's "every core per process" that
// oversubscribes a node running several ranks.
#pragma once

#include <string>

#include "train/dist_context.h"

namespace ct::train {

struct ThreadPlan {
  int threads = 1;
  int cpus = 1;        // CPUs in this process's affinity mask
  int comm_cores = 0;  // of those, pinned to comm workers on this node
  bool from_env = false;
  bool oversubscribed = false;  // local ranks x threads (+ pinned workers) exceed the CPUs
};

// Decides (pure: tests feed the inputs). omp_env: OMP_NUM_THREADS or null; affinity: CCL_WORKER_AFFINITY or
// null. Throws naming OMP_NUM_THREADS when it is not a positive integer.
ThreadPlan plan_threads(int local_world, int cpus, const char* omp_env, const char* affinity);
// Reads this process's environment and affinity, applies the plan (omp_set_num_threads) and returns it.
ThreadPlan apply_thread_plan(int local_world);

// One line per rank, "rank 1 -> node 0 (host) -> 1 thread of CPUs 0-1", gathered to every rank; rank 0 logs
// it. Warns (every rank, once) when the node is oversubscribed.
std::string rank_map(const DistContext& d, const ThreadPlan& plan);

}  // namespace ct::train

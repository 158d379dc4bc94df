// Who this process is in a data-parallel job, and the small collectives the Trainer needs beside gradient
// buckets: a mean over ranks (the logged loss), a broadcast of bytes (decisions rank 0 makes: the checkpoint
// to resume, its contents), and "is this the same on every rank?" checks that name the ranks that differ.
// Without a communicator (or with one process) every helper is the identity.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace ct::train {

struct DistContext {
  int rank = 0;
  int world = 1;
  int local_rank = 0;
  int local_world = 1;
  int node = 0;
  int num_nodes = 1;
  comm::Communicator* comm = nullptr;  // null: one process

  bool distributed() const { return comm != nullptr && world > 1; }
};

// The context of a communicator (rank, world, node layout).
DistContext dist_context(comm::Communicator& comm);

// THE rule for who writes output files and checkpoints.
inline bool is_world_process_zero(const DistContext& d) {
  return d.rank == 0;
}

// Mean of v over ranks.
double mean_over_ranks(const DistContext& d, double v);
// The per-step agreement of the training loop, one all-reduce of 4 floats: the mean of `v` over ranks (as
// mean_over_ranks) and the stop signal some rank has seen (`my_signal`, 0 for none): SIGTERM if any rank has
// one, else SIGINT if any has, else 0. Every rank gets the same answer at the same step.
struct StepAgreement {
  double mean = 0;
  int stop_signal = 0;
};
StepAgreement agree_step(const DistContext& d, double v, int my_signal);
// Every rank's value, in rank order.
std::vector<uint64_t> allgather_u64(const DistContext& d, uint64_t v);
// root's bytes to every rank (others' `s` is replaced).
void broadcast_string(const DistContext& d, std::string* s, int root = 0);
// Every rank's string, in rank order (two collectives whatever the world size).
std::vector<std::string> allgather_strings(const DistContext& d, const std::string& mine);
// root's floats to every rank.
void broadcast_floats(const DistContext& d, float* data, int64_t n, int root = 0);
void barrier(const DistContext& d);

// Throws on every rank when some rank's `hash` differs from rank 0's: "<what> differs from rank 0's on
// rank(s) 1, 3 (node 1)". `detail` is this rank's own explanation, added to its message when it is one that
// differs.
void check_same_on_all_ranks(const DistContext& d, uint64_t hash, const std::string& what,
                             const std::string& detail = "");

}  // namespace ct::train

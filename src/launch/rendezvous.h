// The agents' rendezvous, c10d's rules on a key-value store: a round closes when max nodes have joined, or
// when min nodes have and last_call_timeout has passed since the min-th joined; join_timeout without min
// nodes fails the round with who joined from where. Rounds are numbered; a running round ends when any agent
// asks for a restart (a worker failed, a node left, a node is waiting to join) and the next round is joined
// by whoever is still there. Nodes that stop heart-beating are left out of a closing round and end a running
// one.
//
// One coordinator decides (the agent that hosts the store runs it on a thread): deciding in one place keeps
// every closing decision consistent without store transactions. Everything else is agents reading keys and
// polling, so every wait is bounded by a deadline and every store request is short.
//
// Keys (all under the job's prefix): round = current round number; r<R>/joined = join counter; r<R>/node<i> =
// the i-th joiner's NodeInfo; r<R>/closed = the participants and the job's failure count; r<R>/failed = why
// the round could not close; r<R>/waiting = nodes that arrived after the close; r<R>/restart = the
// RestartRecord that ended it (the first proposer wins); r<R>/failure<k> = worker failures seen in round R;
// r<R>/done<i> = participant i's workers finished; hb/<agent> = heartbeat counters; job/finished = the job
// succeeded.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/store.h"

namespace ct::launch {

struct NodeInfo {
  std::string agent_id;  // unique per agent process
  std::string host;      // hostname, for messages
  std::string addr;      // what the other nodes reach this node by
  int nproc = 1;
  int node_rank = -1;  // static rendezvous: --node-rank (orders the group); -1 under c10d
};

struct RendezvousSettings {
  std::string run_id = "none";
  int min_nodes = 1;
  int max_nodes = 1;
  bool order_by_node_rank = false;  // static rendezvous
  std::chrono::milliseconds join_timeout{600000};
  std::chrono::milliseconds last_call{30000};
  std::chrono::milliseconds keep_alive_interval{5000};
  int keep_alive_max_attempt = 3;
  std::chrono::milliseconds poll{50};
};

// The outcome of a closed round, the same on every participant.
struct Round {
  int number = 0;
  int group_rank = 0;
  std::vector<NodeInfo> nodes;  // by group rank
  int failures = 0;             // failure restarts before this round (TORCHELASTIC_RESTART_COUNT)
  int world_size() const;
  int first_rank(int group_rank) const;  // global rank of that node's local rank 0
};

// Why a round ended. kind: failure (a worker exited non-zero; counts against --max-restarts), node_lost (a
// node stopped heart-beating; counts), scale_up (nodes waiting to join; does not count), leaving (an agent
// was asked to stop; does not count).
struct RestartRecord {
  std::string kind;
  std::string reason;
  std::string by;  // agent id of the proposer
  bool counts() const { return kind == "failure" || kind == "node_lost"; }
};

// One worker's failure as the summary shows it.
struct FailureRecord {
  int rank = -1;
  int local_rank = -1;
  std::string host;
  int pid = 0;
  int exitcode = 0;  // negative: killed by that signal (torchrun's convention)
  double time = 0;   // unix seconds
  std::string error_file;
  std::string message;  // the error file's message, or "Signal 9 (SIGKILL) received by PID ..."
};

class Rendezvous {
 public:
  Rendezvous(std::shared_ptr<comm::Store> store, RendezvousSettings settings, NodeInfo me);
  ~Rendezvous();

  // Joins the current round (or the next, when the current one is already closed) and waits until it closes.
  // Throws ct::Error on join timeout (how many of how many joined, from where), when the job has finished or
  // failed meanwhile, or when the store is gone.
  Round join();

  // Non-blocking reads for the monitor loop.
  std::optional<RestartRecord> restart_requested(int round);
  // Proposes ending `round`; returns the record that won (ours or an earlier one).
  RestartRecord propose_restart(int round, const RestartRecord& r);
  // Moves the job to the round after `round` (idempotent: the first caller moves it).
  void advance(int round);
  void publish_failure(int round, const FailureRecord& f);
  // Round R's failures from every node, root cause first: the earliest, except that a worker killed by a
  // signal within a second of it goes first (its peers' connection errors follow its death).
  std::vector<FailureRecord> failures(int round);
  void mark_done(int round, int group_rank);
  int done_count(int round);
  void mark_job_finished();
  bool job_finished();
  // Whole-job failure (restarts exhausted); carries the summary's root cause.
  void mark_job_failed(const std::string& why);
  std::optional<std::string> job_failed();

  const NodeInfo& me() const { return me_; }
  const RendezvousSettings& settings() const { return s_; }
  comm::Store& store() { return *store_; }

 private:
  // Heart-beats from a thread until destroyed (started by the constructor).
  void heartbeat_loop();

  std::shared_ptr<comm::Store> store_;
  RendezvousSettings s_;
  NodeInfo me_;
  std::atomic<bool> stop_{false};
  std::thread heartbeat_;
};

// Runs in the agent that hosts the store: closes rounds, fails them on join timeout, ends running rounds
// whose nodes went silent or that have nodes waiting to join.
class RendezvousCoordinator {
 public:
  RendezvousCoordinator(std::shared_ptr<comm::Store> store, RendezvousSettings settings);
  ~RendezvousCoordinator();

 private:
  void loop();
  std::shared_ptr<comm::Store> store_;
  RendezvousSettings s_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Ends `round` with r unless someone already did; returns the record that won. Failures are counted first.
RestartRecord propose_restart(comm::Store& store, int round, const RestartRecord& r);

std::string node_info_json(const NodeInfo& n);
NodeInfo node_info_from_json(const std::string& s);
std::string failure_json(const FailureRecord& f);
FailureRecord failure_from_json(const std::string& s);

}  // namespace ct::launch

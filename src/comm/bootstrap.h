// Bootstrap: who am I, how many are we, which of us share a node, and how we first reach each other.
// Reads, in order: mpirun's env (MPICH/Intel Hydra PMI_RANK/PMI_SIZE/MPI_LOCALRANKID/MPI_LOCALNRANKS, Open
// MPI OMPI_COMM_WORLD_*), torchrun-style env (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT, TORCHELASTIC_RUN_ID), else a single process. Node membership comes from local-rank info only
// (never hostnames): a node is a contiguous block of ranks whose local ranks count 0..local_size-1.
// Under mpirun, MPI is initialised here (MPI_THREAD_MULTIPLE) and ranks meet through MPI; under env launch
// they meet through a TCP store at MASTER_ADDR:MASTER_PORT (hosted by rank 0 unless
// TORCHELASTIC_USE_AGENT_STORE).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/store.h"

namespace ct::comm {

enum class Launcher : uint8_t { single, mpi, env };
const char* launcher_name(Launcher l);

struct LaunchInfo {
  Launcher launcher = Launcher::single;
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  // Filled by parse when local sizes are uniform (env launch); under MPI from an allgather of local ranks.
  int node = 0;
  int num_nodes = 1;
  std::string master_addr;  // env launch only
  int master_port = 0;
  std::string run_id;  // TORCHELASTIC_RUN_ID, or "" (job identity for shm names)
  // CORETRAIN_RDZV_ROUND (our launcher's rendezvous round, new on every restart and scale-up), or -1. Part of
  // the store key prefix, so a new round never reads an old round's keys on a store that outlives rounds.
  int rdzv_round = -1;
  bool agent_store = false;  // a launcher hosts the store; rank 0 must not
};

// Pure parser (tests feed it a fake environment). Throws one-line errors naming the variable and value: world
// size 0, rank out of range, local world size not dividing the world size, bad port, missing MASTER_ADDR.
using EnvLookup = std::function<const char*(const char*)>;
LaunchInfo parse_launch_env(const EnvLookup& env);
LaunchInfo parse_launch_env();  // the process environment

// Node index of every rank from each rank's (local_rank, local_size); throws naming the first rank that does
// not fit "contiguous blocks per node".
std::vector<int> nodes_from_local_ranks(const std::vector<int>& local_rank,
                                        const std::vector<int>& local_size);

// The rendezvous a Communicator is built on. For tests, make one from an explicit LaunchInfo and a shared
// (e.g. in-memory) store: threads then act as ranks.
class Bootstrap {
 public:
  // Reads the environment, initialises MPI when launched by mpirun, connects the store when launched from
  // env.
  static std::shared_ptr<Bootstrap> from_env(Store::Timeout timeout);
  // Explicit: info.launcher must be env (store given) or single.
  static std::shared_ptr<Bootstrap> from_store(const LaunchInfo& info, std::shared_ptr<Store> store,
                                               Store::Timeout timeout);
  ~Bootstrap();

  const LaunchInfo& info() const { return info_; }
  // Env launch: the job's store (keys already namespaced per run). Null under MPI and for a single process.
  const std::shared_ptr<Store>& store() const { return store_; }
  bool mpi() const { return info_.launcher == Launcher::mpi; }
  // A value every rank of this job agrees on and no other live job shares (names shared-memory segments).
  uint64_t nonce() const { return nonce_; }
  // 0, 1, 2, ... for each communicator built on this bootstrap; ranks build theirs in the same order, so the
  // ids agree and keep the communicators' shared segments and store keys apart.
  int next_comm_id() { return comm_ids_++; }
  // "job <run_id>": for names and messages.
  std::string job_tag() const;

  // Small all-to-all exchange of one value per rank (bootstrap-time only; MPI_Allgather or the store).
  std::vector<std::string> allgather_string(const std::string& mine, const std::string& tag,
                                            Store::Timeout timeout);

 private:
  Bootstrap() = default;
  void meet(Store::Timeout timeout);
  void check_node_layout(Store::Timeout timeout);  // env launch: every rank's local layout agrees

  LaunchInfo info_;
  std::shared_ptr<Store> store_;
  uint64_t nonce_ = 0;
  int exchange_round_ = 0;
  std::atomic<int> comm_ids_{0};
};

}  // namespace ct::comm

// The launcher's command line: torchrun's flags with torchrun's names and defaults (both spellings,
// --nproc-per-node and --nproc_per_node), each also read from PET_<NAME> (PET_NPROC_PER_NODE, PET_NNODES,
// ...) as the Kubeflow training operator passes them; a flag on the command line beats its PET_ variable.
// Pure: the environment comes in as a lookup so tests can feed a fake one.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ct::launch {

using EnvLookup = std::function<const char*(const char*)>;

// --rdzv-conf key=value pairs with c10d's names; seconds unless said otherwise.
struct RendezvousConf {
  double join_timeout = 600;      // "timeout" is an alias
  double last_call_timeout = 30;  // after min nodes joined, how long to wait for more
  double close_timeout = 30;      // how long the host waits for the others to finish before its store goes
  double read_timeout = 60;       // store connection / request bound
  double keep_alive_interval = 5;
  int keep_alive_max_attempt = 3;  // heartbeats missed before a node counts as lost
  int is_host = -1;                // -1: decide from the endpoint's address
};

struct LaunchArgs {
  int min_nodes = 1;
  int max_nodes = 1;
  std::string nproc_per_node = "1";  // N, "cpu", "auto"
  std::string rdzv_backend = "static";
  std::string rdzv_endpoint;  // host[:port]
  std::string rdzv_id = "none";
  RendezvousConf rdzv_conf;
  bool standalone = false;
  int max_restarts = 0;
  double monitor_interval = 0.1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string local_addr;  // what this node tells the others its address is (default: its hostname)
  std::string log_dir;
  std::string role = "default";
  std::map<int, int> redirects;  // local rank -> 0 none, 1 stdout, 2 stderr, 3 both; key -1 = all ranks
  std::map<int, int> tee;
  std::vector<int> local_ranks_filter;  // empty: every rank's output on the console
  bool no_python = false;
  bool module = false;
  std::vector<std::string> command;  // what each worker runs (program + its arguments)

  // Host and port of the rendezvous store after defaults (c10d default port 29400; static: master addr/port).
  std::string endpoint_host() const;
  int endpoint_port() const;
  bool elastic() const { return min_nodes != max_nodes; }
};

// Parses argv (after "coretrain run"); throws ct::Error naming the flag or PET_ variable and what was
// expected.
LaunchArgs parse_launch_args(const std::vector<std::string>& argv, const EnvLookup& env);

// "0", "3", "0:1,1:2" -> per-local-rank stream selection (torchrun's --redirects / --tee syntax).
std::map<int, int> parse_std_spec(const std::string& flag, const std::string& value);

// Workers per node: an integer, "cpu" (one per CPU of this process's affinity mask, as torchrun), or "auto"
// (one per NUMA node: coretrain workers are multi-threaded, so one per socket/NUMA domain is the fast
// layout).
int resolve_nproc_per_node(const std::string& spec, int cpus, int numa_nodes);

std::string launch_usage();

}  // namespace ct::launch

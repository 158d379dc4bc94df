// torchrun's CLI (torch/distributed/run.py) re-stated: flag names, defaults and PET_ variables; parsing stops
// at the first argument that is not a launcher flag (the worker's command), as argparse's REMAINDER does
// there.
#include "launch/launch_args.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "core/error.h"

namespace ct::launch {

namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

long parse_int(const std::string& what, const std::string& v, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  long x = std::strtol(v.c_str(), &end, 10);
  CT_CHECK(!v.empty() && end && *end == 0 && errno == 0 && x >= lo && x <= hi, what, "='", v,
           "': expected an integer in [", lo, ", ", hi, "]");
  return x;
}

double parse_seconds(const std::string& what, const std::string& v) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  CT_CHECK(!v.empty() && end && *end == 0 && x >= 0, what, "='", v, "': expected a number of seconds >= 0");
  return x;
}

bool parse_bool(const std::string& what, const std::string& v) {
  std::string l = v;
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  if (l == "1" || l == "true" || l == "yes" || l == "y" || l == "on") return true;
  if (l == "0" || l == "false" || l == "no" || l == "n" || l == "off" || l.empty()) return false;
  fail(what, "='", v, "': expected true or false");
}

void parse_nnodes(const std::string& what, const std::string& v, LaunchArgs& a) {
  size_t colon = v.find(':');
  if (colon == std::string::npos) {
    a.min_nodes = a.max_nodes = static_cast<int>(parse_int(what, v, 1, 1 << 20));
  } else {
    a.min_nodes = static_cast<int>(parse_int(what + " (min)", v.substr(0, colon), 1, 1 << 20));
    a.max_nodes = static_cast<int>(parse_int(what + " (max)", v.substr(colon + 1), 1, 1 << 20));
    CT_CHECK(a.min_nodes <= a.max_nodes, what, "='", v, "': MIN must not exceed MAX");
  }
}

void parse_conf(const std::string& what, const std::string& v, RendezvousConf& c) {
  size_t pos = 0;
  while (pos < v.size()) {
    size_t comma = v.find(',', pos);
    std::string kv = trim(v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    pos = comma == std::string::npos ? v.size() : comma + 1;
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    CT_CHECK(eq != std::string::npos, what, ": '", kv, "' is not key=value");
    std::string k = trim(kv.substr(0, eq)), val = trim(kv.substr(eq + 1));
    std::string name = what + " " + k;
    if (k == "join_timeout" || k == "timeout")
      c.join_timeout = parse_seconds(name, val);
    else if (k == "last_call_timeout")
      c.last_call_timeout = parse_seconds(name, val);
    else if (k == "close_timeout")
      c.close_timeout = parse_seconds(name, val);
    else if (k == "read_timeout")
      c.read_timeout = parse_seconds(name, val);
    else if (k == "keep_alive_interval")
      c.keep_alive_interval = parse_seconds(name, val);
    else if (k == "keep_alive_max_attempt")
      c.keep_alive_max_attempt = static_cast<int>(parse_int(name, val, 1, 1000));
    else if (k == "is_host")
      c.is_host = parse_bool(name, val) ? 1 : 0;
    else if (k == "use_agent_store" || k == "store_type" || k == "local_addr")
      continue;  // c10d knobs with a single meaning here: the agent's store is always shared with workers
    else
      fail(what, ": unknown key '", k,
           "' (known: join_timeout, last_call_timeout, close_timeout, read_timeout, keep_alive_interval, "
           "keep_alive_max_attempt, is_host)");
  }
}

// Every launcher flag: canonical dashed name, whether it takes a value.
struct Flag {
  const char* name;
  bool takes_value;
};
constexpr Flag kFlags[] = {
    {"nnodes", true},
    {"nproc-per-node", true},
    {"rdzv-backend", true},
    {"rdzv-endpoint", true},
    {"rdzv-id", true},
    {"rdzv-conf", true},
    {"standalone", false},
    {"max-restarts", true},
    {"monitor-interval", true},
    {"start-method", true},
    {"role", true},
    {"module", false},
    {"no-python", false},
    {"run-path", false},
    {"log-dir", true},
    {"redirects", true},
    {"tee", true},
    {"local-ranks-filter", true},
    {"node-rank", true},
    {"master-addr", true},
    {"master-port", true},
    {"local-addr", true},
    {"logs-specs", true},
};

std::string dashed(std::string s) {
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

std::string pet_name(const std::string& flag) {
  std::string s = "PET_" + flag;
  std::replace(s.begin(), s.end(), '-', '_');
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

void apply(LaunchArgs& a, const std::string& flag, const std::string& value, const std::string& what) {
  if (flag == "nnodes") {
    parse_nnodes(what, value, a);
  } else if (flag == "nproc-per-node") {
    CT_CHECK(value == "cpu" || value == "auto" || value == "gpu" || parse_int(what, value, 1, 4096) > 0, what,
             "='", value, "': expected N, cpu or auto");
    CT_CHECK(value != "gpu", what, "=gpu: coretrain trains on CPUs; use N, cpu or auto");
    a.nproc_per_node = value;
  } else if (flag == "rdzv-backend") {
    CT_CHECK(value == "c10d" || value == "static", what, "='", value,
             "': coretrain supports c10d and static (etcd rendezvous is not available)");
    a.rdzv_backend = value;
  } else if (flag == "rdzv-endpoint") {
    a.rdzv_endpoint = value;
  } else if (flag == "rdzv-id") {
    a.rdzv_id = value;
  } else if (flag == "rdzv-conf") {
    parse_conf(what, value, a.rdzv_conf);
  } else if (flag == "standalone") {
    a.standalone = parse_bool(what, value);
  } else if (flag == "max-restarts") {
    a.max_restarts = static_cast<int>(parse_int(what, value, 0, 1 << 30));
  } else if (flag == "monitor-interval") {
    a.monitor_interval = parse_seconds(what, value);
    CT_CHECK(a.monitor_interval > 0, what, "='", value, "': expected a positive number of seconds");
  } else if (flag == "node-rank") {
    a.node_rank = static_cast<int>(parse_int(what, value, 0, 1 << 20));
  } else if (flag == "master-addr") {
    a.master_addr = value;
  } else if (flag == "master-port") {
    a.master_port = static_cast<int>(parse_int(what, value, 1, 65535));
  } else if (flag == "local-addr") {
    a.local_addr = value;
  } else if (flag == "log-dir") {
    a.log_dir = value;
  } else if (flag == "role") {
    a.role = value;
  } else if (flag == "redirects") {
    a.redirects = parse_std_spec(what, value);
  } else if (flag == "tee") {
    a.tee = parse_std_spec(what, value);
  } else if (flag == "local-ranks-filter") {
    a.local_ranks_filter.clear();
    size_t pos = 0;
    while (pos < value.size()) {
      size_t comma = value.find(',', pos);
      std::string r = trim(value.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
      pos = comma == std::string::npos ? value.size() : comma + 1;
      if (!r.empty()) a.local_ranks_filter.push_back(static_cast<int>(parse_int(what, r, 0, 1 << 20)));
    }
  } else if (flag == "no-python") {
    a.no_python = parse_bool(what, value);
  } else if (flag == "module") {
    a.module = parse_bool(what, value);
  } else if (flag == "start-method" || flag == "run-path" || flag == "logs-specs") {
    // Accepted for torchrun compatibility: workers are always started with fork+exec.
  }
}

}  // namespace

std::map<int, int> parse_std_spec(const std::string& flag, const std::string& value) {
  std::map<int, int> m;
  if (value.find(':') == std::string::npos) {
    m[-1] = static_cast<int>(parse_int(flag, value, 0, 3));
    return m;
  }
  size_t pos = 0;
  while (pos < value.size()) {
    size_t comma = value.find(',', pos);
    std::string item = trim(value.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    pos = comma == std::string::npos ? value.size() : comma + 1;
    size_t colon = item.find(':');
    CT_CHECK(colon != std::string::npos, flag, "='", value, "': expected N or LOCAL_RANK:N,...");
    m[static_cast<int>(parse_int(flag, item.substr(0, colon), 0, 1 << 20))] =
        static_cast<int>(parse_int(flag, item.substr(colon + 1), 0, 3));
  }
  return m;
}

std::string LaunchArgs::endpoint_host() const {
  if (rdzv_backend == "static" && rdzv_endpoint.empty()) return master_addr;
  std::string e = rdzv_endpoint;
  if (!e.empty() && e[0] == '[') return e.substr(1, e.find(']') - 1);
  size_t colon = e.rfind(':');
  return colon == std::string::npos ? e : e.substr(0, colon);
}

int LaunchArgs::endpoint_port() const {
  if (rdzv_backend == "static" && rdzv_endpoint.empty()) return master_port;
  size_t colon = rdzv_endpoint.rfind(':');
  size_t bracket = rdzv_endpoint.rfind(']');
  if (colon == std::string::npos || (bracket != std::string::npos && colon < bracket))
    return rdzv_backend == "static" ? master_port : 29400;
  return static_cast<int>(parse_int("--rdzv-endpoint port", rdzv_endpoint.substr(colon + 1), 0, 65535));
}

LaunchArgs parse_launch_args(const std::vector<std::string>& argv, const EnvLookup& env) {
  LaunchArgs a;
  std::set<std::string> from_cli;
  size_t i = 0;
  std::vector<std::pair<std::string, std::string>> cli;
  for (; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // the worker's command starts here
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1), value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      value = body.substr(eq + 1);
      body = body.substr(0, eq);
      has_value = true;
    }
    std::string name = dashed(body);
    if (name == "m") name = "module";
    if (name == "r") name = "redirects";
    if (name == "t") name = "tee";
    const Flag* f = nullptr;
    for (const Flag& k : kFlags)
      if (name == k.name) f = &k;
    CT_CHECK(f, "unknown launcher flag '", arg,
             "' (see `coretrain run --help`; the worker's command follows the ", "launcher's flags)");
    if (f->takes_value && !has_value) {
      CT_CHECK(i + 1 < argv.size(), "--", name, " needs a value");
      value = argv[++i];
    } else if (!f->takes_value && !has_value) {
      value = "1";
    }
    cli.emplace_back(name, value);
    from_cli.insert(name);
  }
  // PET_ variables first, the command line over them.
  for (const Flag& k : kFlags) {
    if (from_cli.count(k.name)) continue;
    std::string pet = pet_name(k.name);
    const char* v = env(pet.c_str());
    if (!v) continue;
    // The operator passes a switch as its bare presence: PET_STANDALONE="" means --standalone.
    if (!k.takes_value)
      apply(a, k.name, *v ? v : "1", pet);
    else if (*v)
      apply(a, k.name, v, pet);
  }
  for (const auto& [name, value] : cli) apply(a, name, value, "--" + name);
  a.command.assign(argv.begin() + static_cast<long>(i), argv.end());
  CT_CHECK(!a.command.empty(),
           "no worker command: expected e.g. `coretrain run --nproc-per-node 2 qa --model_name_or_path ...`");

  if (a.standalone) {
    // torchrun --standalone: one node, c10d rendezvous on a free local port.
    CT_CHECK(a.min_nodes == 1 && a.max_nodes == 1, "--standalone runs one node, but --nnodes says ",
             a.min_nodes, ":", a.max_nodes);
    a.rdzv_backend = "c10d";
    a.rdzv_endpoint = "localhost:0";
    a.rdzv_id = "standalone";
  }
  if (a.rdzv_backend == "static") {
    CT_CHECK(!a.elastic(), "--nnodes ", a.min_nodes, ":", a.max_nodes,
             " is elastic; the static rendezvous needs a fixed node count (use --rdzv-backend c10d)");
    CT_CHECK(a.node_rank < a.max_nodes, "--node-rank ", a.node_rank, " is out of range for --nnodes ",
             a.max_nodes);
  } else {
    CT_CHECK(!a.rdzv_endpoint.empty() || a.max_nodes == 1, "--rdzv-backend c10d with --nnodes ", a.min_nodes,
             ":", a.max_nodes,
             " needs --rdzv-endpoint host[:port] (PET_RDZV_ENDPOINT): every node must reach the same store");
    if (a.rdzv_endpoint.empty()) a.rdzv_endpoint = "localhost:0";
  }
  (void)a.endpoint_port();  // validates the port now, with the flag's name
  return a;
}

int resolve_nproc_per_node(const std::string& spec, int cpus, int numa_nodes) {
  if (spec == "cpu") return std::max(1, cpus);
  if (spec == "auto") return std::max(1, std::min(numa_nodes, std::max(1, cpus)));
  return static_cast<int>(parse_int("--nproc-per-node", spec, 1, 4096));
}

std::string launch_usage() {
  return R"(usage: coretrain run [launcher flags] COMMAND [ARGS...]

Starts COMMAND (`qa ...`, `coretrain qa ...`, or any program) as --nproc-per-node workers on this node with
torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT,
TORCHELASTIC_*), meets the other nodes' agents through a c10d-style rendezvous, and restarts the group when a
worker fails or a node joins. Flags as torchrun's (also --nproc_per_node etc.); each also from PET_<NAME>:

  --nnodes N|MIN:MAX         nodes (elastic when MIN < MAX); default 1
  --nproc-per-node N|cpu|auto workers per node; cpu = one per CPU, auto = one per NUMA node; default 1
  --rdzv-backend c10d|static default static (node 0 hosts the store at --master-addr:--master-port)
  --rdzv-endpoint HOST[:PORT] the rendezvous store (c10d; default port 29400); the agent on HOST hosts it
  --rdzv-id ID               job id shared by every node (TORCHELASTIC_RUN_ID); default none
  --rdzv-conf K=V,...        join_timeout (600), last_call_timeout (30), close_timeout (30), read_timeout (60),
                             keep_alive_interval (5), keep_alive_max_attempt (3), is_host
  --standalone               one node, rendezvous on a free local port
  --max-restarts N           group restarts after failures before the job fails; default 0
  --monitor-interval SECS    how often workers and the rendezvous are checked; default 0.1
  --node-rank N              static rendezvous: this node's rank; default 0
  --master-addr A, --master-port P  static rendezvous store; default 127.0.0.1:29500
  --local-addr A             the address other nodes know this node by (default: its hostname)
  --log-dir DIR              per-worker logs under DIR/<rdzv-id>_<pid>/attempt_<n>/<local_rank>/
  --redirects, -r N|R:N,...  send stdout (1), stderr (2) or both (3) of workers to files in --log-dir
  --tee, -t N|R:N,...        as --redirects, and to the console with a [role<rank>]: prefix
  --local-ranks-filter R,... show only these local ranks' output on the console
  --no-python, --module, -m, --start-method, --role, --logs-specs   accepted as torchrun does
)";
}

}  // namespace ct::launch

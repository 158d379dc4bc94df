// The agent's loop: rendezvous -> start workers -> watch -> (restart | finish | fail). Restart decisions are
// published in the store before any worker is stopped, so an agent that sees its workers exit can tell a stop
// it caused (or a peer caused) from a new failure.
#include "launch/agent.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>
#include <thread>

#include "comm/store.h"
#include "core/error.h"
#include "core/log.h"
#include "launch/worker_group.h"

extern char** environ;

namespace ct::launch {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

std::atomic<int> g_signal{0};

void on_signal(int sig) {
  g_signal.store(sig);
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

milliseconds ms(double seconds) {
  return milliseconds(static_cast<int64_t>(seconds * 1000.0));
}

// True when host names an address of this machine (binding to it succeeds). A pod's own DNS name may not
// resolve yet when it starts, so the caller first compares host with the hostname (a pod's hostname is its
// name).
bool is_local_address(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0) return false;
  bool local = false;
  for (addrinfo* a = res; a && !local; a = a->ai_next) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_in sin = *reinterpret_cast<sockaddr_in*>(a->ai_addr);
    sin.sin_port = 0;
    local = ::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) == 0;
    ::close(fd);
  }
  ::freeaddrinfo(res);
  return local;
}

// Pods come up before their DNS names do: retry resolution until the deadline, saying so once.
void wait_until_resolvable(const std::string& host, Clock::time_point deadline, const std::string& what) {
  bool said = false;
  while (true) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    addrinfo* res = nullptr;
    int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
    if (rc == 0) {
      ::freeaddrinfo(res);
      return;
    }
    CT_CHECK(Clock::now() < deadline, what, ": host '", host, "' did not resolve before join_timeout (",
             ::gai_strerror(rc), ")");
    if (!said) log::info("[coretrain run] waiting for '", host, "' to resolve (", ::gai_strerror(rc), ")");
    said = true;
    std::this_thread::sleep_for(milliseconds(500));
  }
}

// True once something accepts TCP connections at host:port (tried every half second until the deadline).
bool wait_until_listening(const std::string& host, int port, Clock::time_point deadline) {
  while (true) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) == 0) {
      for (addrinfo* a = res; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) continue;
        bool ok = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0;
        ::close(fd);
        if (ok) {
          ::freeaddrinfo(res);
          return true;
        }
      }
      ::freeaddrinfo(res);
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(500));
  }
}

std::string format_time(double unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d_%H:%M:%S", &tm);
  return buf;
}

int exit_code_of(const FailureRecord& f) {
  return f.exitcode > 0 ? f.exitcode : 128 - f.exitcode;
}

int count_numa_nodes() {
  int n = 0;
  if (DIR* d = ::opendir("/sys/devices/system/node")) {
    while (dirent* e = ::readdir(d))
      if (!std::strncmp(e->d_name, "node", 4) && std::isdigit(static_cast<unsigned char>(e->d_name[4]))) ++n;
    ::closedir(d);
  }
  return std::max(1, n);
}

std::string find_in_path(const std::string& prog, const EnvLookup& env) {
  if (prog.find('/') != std::string::npos) return prog;
  const char* path = env("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t colon = p.find(':', pos);
    std::string dir = p.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
    std::string cand = (dir.empty() ? "." : dir) + "/" + prog;
    if (::access(cand.c_str(), X_OK) == 0) return cand;
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  return "";
}

}  // namespace

AgentHost AgentHost::current(std::function<bool(const std::string&)> is_subcommand) {
  AgentHost h;
  char name[256] = {0};
  ::gethostname(name, sizeof name - 1);
  h.hostname = name;
  cpu_set_t set;
  CPU_ZERO(&set);
  h.cpus = ::sched_getaffinity(0, sizeof set, &set) == 0
               ? CPU_COUNT(&set)
               : static_cast<int>(std::thread::hardware_concurrency());
  h.numa_nodes = count_numa_nodes();
  char exe[4096] = {0};
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  h.self_exe = n > 0 ? std::string(exe, static_cast<size_t>(n)) : "coretrain";
  h.is_subcommand = std::move(is_subcommand);
  h.env = [](const char* k) { return static_cast<const char*>(std::getenv(k)); };
  for (char** e = ::environ; e && *e; ++e) h.environ.emplace_back(*e);
  return h;
}

std::map<std::string, std::string> worker_env(const LaunchArgs& args, const Round& round, int local_rank,
                                              const std::string& master_addr, int master_port,
                                              const std::string& error_file, int omp_threads) {
  const int nproc = round.nodes[static_cast<size_t>(round.group_rank)].nproc;
  const int rank = round.first_rank(round.group_rank) + local_rank;
  std::map<std::string, std::string> e;
  e["LOCAL_RANK"] = std::to_string(local_rank);
  e["RANK"] = std::to_string(rank);
  e["GROUP_RANK"] = std::to_string(round.group_rank);
  e["ROLE_RANK"] = std::to_string(rank);
  e["ROLE_NAME"] = args.role;
  e["LOCAL_WORLD_SIZE"] = std::to_string(nproc);
  e["WORLD_SIZE"] = std::to_string(round.world_size());
  e["GROUP_WORLD_SIZE"] = std::to_string(round.nodes.size());
  e["ROLE_WORLD_SIZE"] = std::to_string(round.world_size());
  e["MASTER_ADDR"] = master_addr;
  e["MASTER_PORT"] = std::to_string(master_port);
  e["TORCHELASTIC_RESTART_COUNT"] = std::to_string(round.failures);
  e["TORCHELASTIC_MAX_RESTARTS"] = std::to_string(args.max_restarts);
  e["TORCHELASTIC_RUN_ID"] = args.rdzv_id;
  e["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  e["TORCHELASTIC_ERROR_FILE"] = error_file;
  // Accelerator-only knobs torchrun sets (1.13's name and 2.x's); harmless on CPUs, kept so the env matches.
  e["NCCL_ASYNC_ERROR_HANDLING"] = "1";
  e["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1";
  e["CORETRAIN_RDZV_ROUND"] = std::to_string(round.number);
  if (omp_threads > 0) e["OMP_NUM_THREADS"] = std::to_string(omp_threads);
  return e;
}

std::vector<std::string> resolve_worker_command(const LaunchArgs& args, const AgentHost& host) {
  std::vector<std::string> cmd = args.command;
  CT_CHECK(!cmd.empty(), "no worker command");
  if (args.module) {
    cmd.insert(cmd.begin(), {"/usr/bin/python3", "-u", "-m"});
    return cmd;
  }
  if (cmd[0] == "coretrain") {
    cmd[0] = host.self_exe;
    return cmd;
  }
  if (host.is_subcommand && host.is_subcommand(cmd[0])) {
    cmd.insert(cmd.begin(), host.self_exe);
    return cmd;
  }
  const bool py = cmd[0].size() > 3 && cmd[0].compare(cmd[0].size() - 3, 3, ".py") == 0;
  if (py && !args.no_python) {
    cmd.insert(cmd.begin(), {"/usr/bin/python3", "-u"});
    return cmd;
  }
  std::string path = find_in_path(cmd[0], host.env);
  CT_CHECK(!path.empty() && ::access(path.c_str(), X_OK) == 0, "worker command '", cmd[0],
           "' is neither a coretrain command (qa, ...) nor an executable in PATH");
  cmd[0] = path;
  return cmd;
}

std::string failure_summary(const std::string& name, const std::vector<FailureRecord>& failures) {
  const std::string bar(60, '='), rule(60, '-');
  auto entry = [](const FailureRecord& f, size_t i) {
    std::string s = str("[", i, "]:\n");
    s += str("  time      : ", format_time(f.time), "\n");
    s += str("  host      : ", f.host, "\n");
    s += str("  rank      : ", f.rank, " (local_rank: ", f.local_rank, ")\n");
    s += str("  exitcode  : ", f.exitcode, " (pid: ", f.pid, ")\n");
    s += str("  error_file: ", f.error_file.empty() || f.exitcode < 0 ? "<N/A>" : f.error_file, "\n");
    s += str("  traceback : ", f.message, "\n");
    return s;
  };
  std::string s = bar + "\n" + name + " FAILED\n" + rule + "\nFailures:\n";
  if (failures.size() <= 1) s += "  <NO_OTHER_FAILURES>\n";
  for (size_t i = 1; i < failures.size(); ++i) s += entry(failures[i], i);
  s += rule + "\nRoot Cause (first observed failure):\n";
  if (!failures.empty()) s += entry(failures[0], 0);
  s += bar + "\n";
  return s;
}

namespace {

class Agent {
 public:
  Agent(const LaunchArgs& args, const AgentHost& host) : a_(args), h_(host) {}

  int run() {
    install_signal_handlers();
    nproc_ = resolve_nproc_per_node(a_.nproc_per_node, h_.cpus, h_.numa_nodes);
    command_ = resolve_worker_command(a_, h_);
    name_ = a_.command[0] == "coretrain" && a_.command.size() > 1 ? "coretrain " + a_.command[1]
            : h_.is_subcommand && h_.is_subcommand(a_.command[0]) ? "coretrain " + a_.command[0]
                                                                  : a_.command[0];
    const char* omp = h_.env("OMP_NUM_THREADS");
    omp_threads_ = omp && *omp ? 0 : std::max(1, h_.cpus / nproc_);
    if (omp_threads_ > 0)
      say("OMP_NUM_THREADS=", omp_threads_, " for each of ", nproc_, " worker(s) (", h_.cpus,
          " CPUs in this agent's affinity mask; set OMP_NUM_THREADS to choose)");
    connect();
    try {
      return loop();
    } catch (const Error& e) {
      if (group_) group_->stop(SIGTERM, milliseconds(5000));
      const std::string m = e.what();
      const bool store_lost =
          m.find("connection lost") != std::string::npos ||
          m.find("could not connect") != std::string::npos ||
          (m.find("timed out") != std::string::npos && m.find("tcp store") != std::string::npos);
      if (store_lost)
        fail("lost the rendezvous store ", endpoint_,
             " (the agent hosting it exited or its node is gone): ", e.what());
      throw;
    }
  }

 private:
  template <class... Args>
  void say(const Args&... args) {
    log::info("[coretrain run ", h_.hostname, "] ", args...);
  }

  void connect() {
    const auto& c = a_.rdzv_conf;
    const auto deadline = Clock::now() + ms(c.join_timeout);
    std::string host = a_.endpoint_host();
    int port = a_.endpoint_port();
    bool hosting = a_.rdzv_backend == "static" ? a_.node_rank == 0
                   : c.is_host >= 0            ? c.is_host == 1
                   : a_.standalone             ? true
                                   : host == h_.hostname || host == "localhost" || is_local_address(host);
    if (hosting) {
      try {
        server_ = std::make_unique<comm::TcpStoreServer>(port);
      } catch (const Error& e) {
        // Another agent on this machine hosts it (several agents per host in tests, or two on one pod IP).
        if (c.is_host == 1 || a_.rdzv_backend == "static") throw;
        say("rendezvous port ", port, " on ", host, " is taken; joining as a client (", e.what(), ")");
      }
    }
    if (server_) {
      port = server_->port();
      client_ = comm::connect_tcp_store("127.0.0.1", port, milliseconds(10000));
    } else {
      wait_until_resolvable(host, deadline, "--rdzv-endpoint");
      // Wait for the host's agent up to join_timeout; after that every store request (and reconnect) is
      // bounded by read_timeout, so a store that goes away is noticed in seconds, not after join_timeout.
      CT_CHECK(wait_until_listening(host, port, deadline), "rendezvous endpoint ", host, ":", port,
               " never answered within join_timeout=", c.join_timeout, "s: is `coretrain run` with the same ",
               "--rdzv-endpoint running on ", host, "?");
      client_ = comm::connect_tcp_store(host, port, ms(c.read_timeout));
    }
    endpoint_ = str(host, ":", port);
    master_addr_ = a_.standalone ? "127.0.0.1" : host;
    master_port_ = port;
    store_ = comm::make_prefix_store(client_, "rdzv/" + a_.rdzv_id);

    RendezvousSettings s;
    s.run_id = a_.rdzv_id;
    s.min_nodes = a_.min_nodes;
    s.max_nodes = a_.max_nodes;
    s.order_by_node_rank = a_.rdzv_backend == "static";
    s.join_timeout = ms(c.join_timeout);
    s.last_call = a_.rdzv_backend == "static" ? milliseconds(0) : ms(c.last_call_timeout);
    s.keep_alive_interval = ms(c.keep_alive_interval);
    s.keep_alive_max_attempt = c.keep_alive_max_attempt;
    if (server_) coordinator_ = std::make_unique<RendezvousCoordinator>(store_, s);
    std::random_device rd;
    NodeInfo me;
    me.agent_id = str(h_.hostname, ":", ::getpid(), ":", std::hex, rd());
    me.host = h_.hostname;
    me.addr = a_.local_addr.empty() ? h_.hostname : a_.local_addr;
    me.nproc = nproc_;
    me.node_rank = a_.rdzv_backend == "static" ? a_.node_rank : -1;
    rdzv_ = std::make_unique<Rendezvous>(store_, s, me);
    say("rendezvous '", a_.rdzv_id, "' (", a_.rdzv_backend, ") at ", endpoint_,
        server_ ? " (hosted here)" : "", ": nodes ", a_.min_nodes, ":", a_.max_nodes, ", ", nproc_,
        " worker(s) here, max restarts ", a_.max_restarts);
  }

  int failure_count() {
    comm::Store& s = rdzv_->store();
    if (!s.check({"failures"})) return 0;
    return std::stoi(s.get_string("failures", milliseconds(10000)));
  }

  std::string attempt_dir(int round) {
    if (log_root_.empty()) {
      std::string base = a_.log_dir;
      if (base.empty()) {
        // torchrun's layout: error files under a temporary folder when no --log-dir is given.
        char tmpl[] = "/tmp/coretrain_run_XXXXXX";
        CT_CHECK(::mkdtemp(tmpl), "cannot create a log directory under /tmp: ", std::strerror(errno));
        base = tmpl;
        temp_logs_ = base;
      }
      log_root_ = str(base, "/", a_.rdzv_id, "_", ::getpid());
      if (!a_.log_dir.empty()) say("worker logs under ", log_root_);
    }
    return str(log_root_, "/attempt_", round);
  }

  std::vector<WorkerLaunch> plan_workers(const Round& round) {
    std::vector<WorkerLaunch> out;
    const std::string dir = attempt_dir(round.number);
    auto pick = [](const std::map<int, int>& m, int lr) {
      auto it = m.find(lr);
      if (it != m.end()) return it->second;
      it = m.find(-1);
      return it == m.end() ? 0 : it->second;
    };
    for (int lr = 0; lr < nproc_; ++lr) {
      WorkerLaunch w;
      w.local_rank = lr;
      w.rank = round.first_rank(round.group_rank) + lr;
      w.argv = command_;
      std::string wdir = str(dir, "/", lr);
      std::filesystem::create_directories(wdir);
      w.error_file = wdir + "/error.json";
      std::filesystem::remove(w.error_file);
      auto env = worker_env(a_, round, lr, master_addr_, master_port_, w.error_file, omp_threads_);
      for (const auto& kv : h_.environ) {
        std::string k = kv.substr(0, kv.find('='));
        if (!env.count(k)) w.env.push_back(kv);
      }
      for (const auto& [k, v] : env) w.env.push_back(k + "=" + v);
      const int redirect = pick(a_.redirects, lr), tee = pick(a_.tee, lr);
      const bool to_files = !a_.log_dir.empty() || redirect || tee;
      if (to_files && ((redirect | tee) & 1)) w.stdout_file = wdir + "/stdout.log";
      if (to_files && ((redirect | tee) & 2)) w.stderr_file = wdir + "/stderr.log";
      w.tee_stdout = tee & 1;
      w.tee_stderr = tee & 2;
      w.console = a_.local_ranks_filter.empty() ||
                  std::find(a_.local_ranks_filter.begin(), a_.local_ranks_filter.end(), lr) !=
                      a_.local_ranks_filter.end();
      if (!w.console && !a_.log_dir.empty()) {
        if (w.stdout_file.empty()) w.stdout_file = wdir + "/stdout.log";
        if (w.stderr_file.empty()) w.stderr_file = wdir + "/stderr.log";
      }
      w.prefix = str("[", a_.role, w.rank, "]:");
      out.push_back(std::move(w));
    }
    return out;
  }

  // Runs rounds until the job ends; returns the exit code.
  int loop() {
    int prev_world = -1;
    const milliseconds grace = ms(a_.rdzv_conf.close_timeout);
    while (true) {
      Round round = rdzv_->join();
      for (const auto& n : round.nodes)
        if (n.nproc != round.nodes[0].nproc) {
          std::string why = str("node ", n.host, " runs ", n.nproc, " worker(s) and ", round.nodes[0].host,
                                " ", round.nodes[0].nproc, ": every node must run the same --nproc-per-node");
          rdzv_->mark_job_failed(why);
          linger_for_peers();
          fail(why);
        }
      const int world = round.world_size();
      const int first = round.first_rank(round.group_rank);
      say("round ", round.number, ": ", round.nodes.size(), " node(s), world size ", world,
          " (this node: group rank ", round.group_rank, ", ranks ", first, "..", first + nproc_ - 1,
          "), restart ", round.failures, " of ", a_.max_restarts);
      if (prev_world > 0 && prev_world != world)
        say("world size ", prev_world, " -> ", world, ": workers resume from the last checkpoint with ",
            world, " ranks (the global batch changes with it)");
      prev_world = world;

      group_ = std::make_unique<WorkerGroup>(plan_workers(round), h_.hostname);
      group_->start();
      int code = watch(round, grace);
      if (code >= 0) return code;
      rdzv_->advance(round.number);
    }
  }

  // Watches one round; returns an exit code when the agent is done, -1 to rejoin.
  int watch(const Round& round, milliseconds grace) {
    const int R = round.number;
    auto next_store_check = Clock::now();
    while (true) {
      std::this_thread::sleep_for(milliseconds(10));
      if (int sig = g_signal.load()) {
        say("received ",
            sig == SIGTERM  ? "SIGTERM"
            : sig == SIGINT ? "SIGINT"
                            : "SIGHUP",
            ": forwarding to the workers and leaving the job");
        try {
          rdzv_->propose_restart(
              R, RestartRecord{"leaving", str("the agent on ", h_.hostname, " was stopped by signal ", sig),
                               rdzv_->me().agent_id});
        } catch (const std::exception&) {
        }
        group_->stop(sig, grace);
        return 128 + sig;
      }
      WorkerGroup::State st = group_->poll();
      std::optional<RestartRecord> rec;
      if (st != WorkerGroup::State::running || Clock::now() >= next_store_check) {
        next_store_check = Clock::now() + ms(a_.monitor_interval);
        rec = rdzv_->restart_requested(R);
        if (auto why = rdzv_->job_failed()) {
          group_->stop(SIGTERM, grace);
          say("the job failed on another node: ", *why);
          return give_up(R);
        }
      }
      if (st == WorkerGroup::State::succeeded && !rec) {
        say("workers finished (round ", R, ")");
        rdzv_->mark_done(R, round.group_rank);
        if (server_) {
          // Keep the store up until every node's workers are done (bounded), then say the job finished.
          auto deadline = Clock::now() + ms(a_.rdzv_conf.close_timeout);
          while (rdzv_->done_count(R) < static_cast<int>(round.nodes.size()) && Clock::now() < deadline)
            std::this_thread::sleep_for(milliseconds(50));
          rdzv_->mark_job_finished();
        }
        return 0;
      }
      if (st == WorkerGroup::State::failed && !rec) {
        // Our failure may still be the consequence of a restart another agent just published.
        rec = rdzv_->restart_requested(R);
        if (!rec) {
          for (const auto& f : group_->failures()) rdzv_->publish_failure(R, f);
          const auto& f = group_->failures().front();
          rec = rdzv_->propose_restart(
              R, RestartRecord{"failure",
                               str("rank ", f.rank, " on ", f.host, " ",
                                   f.exitcode < 0 ? "was killed: " + f.message
                                                  : str("exited with code ", f.exitcode, ": ", f.message)),
                               rdzv_->me().agent_id});
        }
      }
      if (!rec) continue;
      group_->stop(SIGTERM, grace);
      const int failures = failure_count();
      if (rec->counts() && failures > a_.max_restarts) {
        say("giving up after ", failures - 1, " restart(s) (--max-restarts ", a_.max_restarts,
            "): ", rec->reason);
        return give_up(R, rec->reason);
      }
      if (rec->counts())
        say("restarting the workers (restart ", failures, " of ", a_.max_restarts, "): ", rec->reason);
      else
        say("restarting the workers for a membership change (not counted as a failure): ", rec->reason);
      return -1;
    }
  }

  // The job is over: torchrun's summary of round R's failures (every node's, from the store), the job marked
  // failed for the nodes still watching, and the root cause's exit code.
  int give_up(int R, const std::string& reason = "") {
    auto all = rdzv_->failures(R);
    std::fputs(failure_summary(name_, all).c_str(), stderr);
    rdzv_->mark_job_failed(
        all.empty() ? reason : str("rank ", all[0].rank, " on ", all[0].host, ": ", all[0].message));
    linger_for_peers();
    return all.empty() ? 1 : exit_code_of(all[0]);
  }

  // When the store lives in this process, the other agents may still be reading the round or why the job
  // failed: give them a moment before it goes, so they fail with the reason rather than "store lost".
  void linger_for_peers() {
    if (server_) std::this_thread::sleep_for(ms(std::min(2.0, a_.rdzv_conf.close_timeout)));
  }

  const LaunchArgs& a_;
  const AgentHost& h_;
  int nproc_ = 1;
  int omp_threads_ = 0;
  std::vector<std::string> command_;
  std::string name_;
  std::string endpoint_, master_addr_;
  int master_port_ = 0;
  std::unique_ptr<comm::TcpStoreServer> server_;
  std::shared_ptr<comm::Store> client_, store_;
  std::unique_ptr<RendezvousCoordinator> coordinator_;
  std::unique_ptr<Rendezvous> rdzv_;
  std::unique_ptr<WorkerGroup> group_;
  std::string log_root_, temp_logs_;

 public:
  ~Agent() {
    group_.reset();
    rdzv_.reset();
    coordinator_.reset();
    if (!temp_logs_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(temp_logs_, ec);
    }
  }
};

}  // namespace

int run_agent(const LaunchArgs& args, const AgentHost& host) {
  Agent agent(args, host);
  return agent.run();
}

}  // namespace ct::launch

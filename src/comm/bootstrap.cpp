// Bootstrap: parses the launcher's environment, initialises MPI or the TCP store, and agrees on a job nonce.
#include "comm/bootstrap.h"

#include <mpi.h>
#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "comm/comm_error.h"
#include "core/error.h"
#include "core/log.h"

namespace ct::comm {

const char* launcher_name(Launcher l) {
  switch (l) {
    case Launcher::single:
      return "single process";
    case Launcher::mpi:
      return "mpirun";
    case Launcher::env:
      return "env";
  }
  return "?";
}

namespace {

int env_int(const EnvLookup& env, const char* name, int lo, int hi, const std::string& what) {
  const char* v = env(name);
  CT_CHECK(v && *v, "bootstrap: ", name, " is not set (needed for ", what, ")");
  char* end = nullptr;
  errno = 0;
  long x = std::strtol(v, &end, 10);
  CT_CHECK(errno == 0 && end != v && *end == 0, "bootstrap: ", name, "='", v, "' is not an integer");
  CT_CHECK(x >= lo && x <= hi, "bootstrap: ", name, "=", x, " out of range ", lo, "..", hi, " (", what, ")");
  return static_cast<int>(x);
}

bool has(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  return v && *v;
}

std::once_flag g_mpi_once;
std::atomic<bool> g_mpi_inited_here{false};
// Set by meet() under mpirun: the job has ranks on more than one node. And the bootstrap's timeout, which
// also bounds the goodbye barrier below.
std::atomic<bool> g_mpi_spans_nodes{false};
std::atomic<int64_t> g_exit_timeout_ms{300000};

// Runs at exit (on_exit, so it sees the exit status). On one node, as always: MPI_Finalize, unless
// communication failed (the peers may be gone or stuck and MPI_Finalize could block: leave and let the
// launcher tear the job down on our non-zero exit). Across nodes, MPI_Finalize is skipped: Debian's MPICH 4.0
// over UCX/TCP intermittently deadlocks inside it (one rank spins in ucp_worker_progress closing endpoints
// while the others wait in the PMI barrier; seen with `coretrain qa` across network namespaces in 5 of 20
// `mpiexec -n 3 -ppn 1` runs after every rank had written its results; 0 of 35 hung with the handling below;
// tests/comm/netns_bench.sh has the same with bench comm). Nothing MPI_Finalize would still do matters then,
// but leaving without it needs care. Checked with Hydra here: a rank that exits without MPI_Finalize gets the
// other ranks *of its node* killed and mpiexec reports the status of whichever exited first (rank 0 leaving
// with 0 while rank 1 would leave with 5 makes mpiexec return 0), while ranks on other nodes are not told at
// all and sit out their timeouts (--ddp_timeout, 30 min by default). So:
//  - leaving with an error (status != 0, whether or not communication failed): MPI_Abort, which Hydra turns
//    into a teardown of every rank on every node within about a second, and mpiexec returns our status;
//  - leaving with 0: first meet every other rank in a barrier bounded by the bootstrap's timeout (rank 0 may
//    still be writing the output folder), so that no rank is killed mid-work and all leave with the same 0.
//    A barrier that times out means some rank never got here: say so and abort the job with 1.
// _Exit, not return: the rest of exit would run UCX's teardown with live endpoints; stdio is flushed first.
// Before it, the PMI finalize handshake below, so that Hydra does not take the exit for a crash.
//
// Hydra's proxy watches each rank's PMI socket: closed before a PMI finalize, it means the rank died, and the
// proxy SIGKILLs the node's other ranks. Leaving without MPI_Finalize, the first rank of a node to exit thus
// kills its node-mates; one still on its way out is reported as "EXIT CODE: 9" and mpiexec fails a job that
// succeeded (1 run in 6 of tests/train/netns_qa.sh's mpi mode, 2026-11-26). So each rank says
// what MPI_Finalize's PMI_Finalize says on that socket (PMI-1 wire format, which Hydra accepts whatever the
// client negotiated): "cmd=finalize", then waits up to 5 s for "cmd=finalize_ack"; Hydra then stops watching
// the socket. Launchers without PMI_FD (Slurm's PMI-2, PMIx, Open MPI) are left as they were.
void pmi_finalize_handshake() {
  const char* env = std::getenv("PMI_FD");
  if (!env || !*env) return;
  char* end = nullptr;
  const long fd = std::strtol(env, &end, 10);
  if (*end != '\0' || fd < 0) return;
  static constexpr char kCmd[] = "cmd=finalize\n";
  if (::write(static_cast<int>(fd), kCmd, sizeof(kCmd) - 1) != static_cast<ssize_t>(sizeof(kCmd) - 1)) return;
  char buf[256];
  size_t n = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (n < sizeof(buf)) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd p{static_cast<int>(fd), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return;
    const ssize_t k = ::read(static_cast<int>(fd), buf + n, sizeof(buf) - n);
    if (k <= 0) return;
    n += static_cast<size_t>(k);
    if (std::memchr(buf, '\n', n)) return;
  }
}

void leave_mpi_at_exit(int status, void*) {
  int fin = 0;
  MPI_Finalized(&fin);
  if (fin) return;
  if (!g_mpi_spans_nodes) {
    if (!comm_failed()) MPI_Finalize();
    return;
  }
  std::fflush(nullptr);
  if (status != 0) {
    // The error line is in the pipe to Hydra's proxy, but MPI_Abort's teardown can beat its forwarding (rank
    // 0's "error: ... model.safetensors" went missing in about half of tests/train/netns_qa.sh's mpi runs on
    // a loaded machine): give the proxy a moment to pass it on.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    MPI_Abort(MPI_COMM_WORLD, status);
  }
  if (comm_failed()) return;  // and yet exiting with 0: leave as before, without touching MPI
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  const auto start = std::chrono::steady_clock::now();
  const auto limit = std::chrono::milliseconds(g_exit_timeout_ms.load());
  for (int done = 0; !done;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) break;
    if (std::chrono::steady_clock::now() - start > limit) {
      int rank = -1;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      std::fprintf(stderr,
                   "error: rank %d: not every rank reached the end of the job within %.0f s (exit barrier); "
                   "aborting the job\n",
                   rank, static_cast<double>(limit.count()) / 1000.0);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  pmi_finalize_handshake();
  std::_Exit(0);
}

void init_mpi() {
  std::call_once(g_mpi_once, [] {
    int inited = 0;
    MPI_Initialized(&inited);
    if (inited) return;
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    CT_CHECK(rc == MPI_SUCCESS, "bootstrap: MPI_Init_thread failed (code ", rc, ")");
    CT_CHECK(provided >= MPI_THREAD_SERIALIZED, "bootstrap: MPI gives thread level ", provided,
             "; comm worker threads need at least MPI_THREAD_SERIALIZED");
    if (provided < MPI_THREAD_MULTIPLE)
      log::warn("MPI provides MPI_THREAD_SERIALIZED only; keep CCL_WORKER_COUNT=1 across nodes");
    g_mpi_inited_here = true;
    on_exit(leave_mpi_at_exit, nullptr);  // glibc: like atexit, and the handler gets the exit status
  });
}

}  // namespace

LaunchInfo parse_launch_env(const EnvLookup& env) {
  LaunchInfo info;
  constexpr int kMax = 1 << 24;
  if (has(env, "PMI_RANK") || has(env, "OMPI_COMM_WORLD_RANK")) {
    info.launcher = Launcher::mpi;
    bool ompi = !has(env, "PMI_RANK");
    const char* rank_var = ompi ? "OMPI_COMM_WORLD_RANK" : "PMI_RANK";
    const char* size_var = ompi ? "OMPI_COMM_WORLD_SIZE" : "PMI_SIZE";
    const char* lrank_var = ompi ? "OMPI_COMM_WORLD_LOCAL_RANK" : "MPI_LOCALRANKID";
    const char* lsize_var = ompi ? "OMPI_COMM_WORLD_LOCAL_SIZE" : "MPI_LOCALNRANKS";
    info.size = env_int(env, size_var, 1, kMax, "the world size");
    info.rank = env_int(env, rank_var, 0, info.size - 1, str(size_var, "=", info.size));
    if (has(env, lrank_var) || has(env, lsize_var)) {
      info.local_size = env_int(env, lsize_var, 1, info.size, "ranks on this node");
      info.local_rank = env_int(env, lrank_var, 0, info.local_size - 1, str(lsize_var, "=", info.local_size));
    } else {
      // A PMI launcher without local-rank info: assume nothing is shared (each rank its own node).
      info.local_size = 1;
      info.local_rank = 0;
    }
    // Provisional (uniform blocks); the bootstrap recomputes it from every rank's local info.
    info.node = info.rank / info.local_size;
    info.num_nodes = (info.size + info.local_size - 1) / info.local_size;
    return info;
  }
  if (has(env, "RANK") || has(env, "WORLD_SIZE")) {
    info.launcher = Launcher::env;
    info.size = env_int(env, "WORLD_SIZE", 1, kMax, "the world size");
    info.rank = env_int(env, "RANK", 0, info.size - 1, str("WORLD_SIZE=", info.size));
    if (has(env, "LOCAL_WORLD_SIZE") || has(env, "LOCAL_RANK")) {
      info.local_size =
          env_int(env, "LOCAL_WORLD_SIZE", 1, info.size, str("ranks per node, WORLD_SIZE=", info.size));
      info.local_rank =
          env_int(env, "LOCAL_RANK", 0, info.local_size - 1, str("LOCAL_WORLD_SIZE=", info.local_size));
    }
    CT_CHECK(info.size % info.local_size == 0, "bootstrap: LOCAL_WORLD_SIZE=", info.local_size,
             " does not divide WORLD_SIZE=", info.size, " (every node must run the same number of ranks)");
    CT_CHECK(info.rank % info.local_size == info.local_rank, "bootstrap: RANK=", info.rank,
             " with LOCAL_WORLD_SIZE=", info.local_size,
             " should have LOCAL_RANK=", info.rank % info.local_size, ", got ", info.local_rank,
             " (ranks must fill nodes in contiguous blocks)");
    info.node = info.rank / info.local_size;
    info.num_nodes = info.size / info.local_size;
    if (info.size > 1) {
      CT_CHECK(has(env, "MASTER_ADDR"), "bootstrap: MASTER_ADDR is not set (WORLD_SIZE=", info.size,
               " needs the store's host)");
      info.master_addr = env("MASTER_ADDR");
      info.master_port = env_int(env, "MASTER_PORT", 1, 65535, "the store's port");
    }
    if (has(env, "TORCHELASTIC_RUN_ID")) info.run_id = env("TORCHELASTIC_RUN_ID");
    if (has(env, "TORCHELASTIC_RESTART_COUNT")) info.run_id += str(".r", env("TORCHELASTIC_RESTART_COUNT"));
    if (has(env, "CORETRAIN_RDZV_ROUND"))
      info.rdzv_round = env_int(env, "CORETRAIN_RDZV_ROUND", 0, 1 << 30, "the rendezvous round");
    const char* agent = env("TORCHELASTIC_USE_AGENT_STORE");
    info.agent_store =
        agent && (!std::strcmp(agent, "True") || !std::strcmp(agent, "true") || !std::strcmp(agent, "1"));
    return info;
  }
  return info;
}

LaunchInfo parse_launch_env() {
  return parse_launch_env([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

std::vector<int> nodes_from_local_ranks(const std::vector<int>& local_rank,
                                        const std::vector<int>& local_size) {
  CT_CHECK(local_rank.size() == local_size.size(), "bootstrap: local rank/size lists differ in length");
  std::vector<int> node(local_rank.size());
  int n = -1;
  size_t r = 0;
  while (r < local_rank.size()) {
    int ls = local_size[r];
    CT_CHECK(local_rank[r] == 0 && ls >= 1, "bootstrap: rank ", r, " has local rank ", local_rank[r],
             " where a node should start (local rank 0); ranks must fill nodes in contiguous blocks");
    ++n;
    for (int i = 0; i < ls; ++i, ++r) {
      CT_CHECK(r < local_rank.size() && local_rank[r] == i && local_size[r] == ls, "bootstrap: rank ", r,
               " reports local rank ", r < local_rank.size() ? local_rank[r] : -1, " of ",
               r < local_size.size() ? local_size[r] : -1, ", expected ", i, " of ", ls,
               " (ranks must fill nodes in contiguous blocks)");
      node[r] = n;
    }
  }
  return node;
}

std::shared_ptr<Bootstrap> Bootstrap::from_env(Store::Timeout timeout) {
  static std::mutex mu;
  static std::weak_ptr<Bootstrap> current;
  // The store (and rank 0's server) lives as long as the process: a later bootstrap, after every communicator
  // of the first one is gone, must not race a peer still talking to a server rank 0 is tearing down. Each
  // bootstrap generation gets its own key space; every rank counts generations the same way.
  static std::unique_ptr<TcpStoreServer> server;
  static std::shared_ptr<Store> client;
  static int generation = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (auto live = current.lock()) return live;
  LaunchInfo info = parse_launch_env();
  g_exit_timeout_ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
  auto b = std::shared_ptr<Bootstrap>(new Bootstrap());
  b->info_ = info;
  if (info.launcher == Launcher::mpi) {
    init_mpi();
    int size = 0, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CT_CHECK(size == info.size && rank == info.rank, "bootstrap: MPI says rank ", rank, " of ", size,
             " but the environment says ", info.rank, " of ", info.size);
  } else if (info.launcher == Launcher::env && info.size > 1) {
    if (info.rank == 0) {
      // Validate the address before binding: a typo must not leave the others retrying until the timeout.
      addrinfo hints{};
      hints.ai_family = AF_INET;
      addrinfo* res = nullptr;
      int rc = ::getaddrinfo(info.master_addr.c_str(), nullptr, &hints, &res);
      if (rc != 0)
        fail("bootstrap: MASTER_ADDR '", info.master_addr, "' does not resolve: ", ::gai_strerror(rc));
      ::freeaddrinfo(res);
      if (!info.agent_store && !server) server = std::make_unique<TcpStoreServer>(info.master_port);
    }
    if (!client) client = connect_tcp_store(info.master_addr, info.master_port, timeout);
    // "ct/<run_id>.r<restart>[.round<R>]/g<generation>": TORCHELASTIC_RESTART_COUNT stays the same across a
    // scale-up, the rendezvous round does not.
    b->store_ = make_prefix_store(
        client, str("ct/", info.run_id.empty() ? std::string("job") : info.run_id,
                    info.rdzv_round >= 0 ? str(".round", info.rdzv_round) : "", "/g", generation++));
  }
  b->meet(timeout);
  current = b;
  return b;
}

std::shared_ptr<Bootstrap> Bootstrap::from_store(const LaunchInfo& info, std::shared_ptr<Store> store,
                                                 Store::Timeout timeout) {
  CT_CHECK(info.launcher != Launcher::mpi, "bootstrap: from_store cannot describe an MPI launch");
  CT_CHECK(info.size == 1 || store, "bootstrap: ", info.size, " ranks need a store");
  auto b = std::shared_ptr<Bootstrap>(new Bootstrap());
  b->info_ = info;
  b->store_ = std::move(store);
  b->meet(timeout);
  return b;
}

Bootstrap::~Bootstrap() = default;

std::string Bootstrap::job_tag() const {
  return info_.run_id.empty() ? std::string("job") : info_.run_id;
}

void Bootstrap::meet(Store::Timeout timeout) {
  std::random_device rd;
  uint64_t mine = (uint64_t{rd()} << 32) ^ rd() ^ (static_cast<uint64_t>(::getpid()) << 16);
  if (info_.size == 1) {
    nonce_ = mine;
    return;
  }
  if (mpi()) {
    MPI_Bcast(&mine, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    nonce_ = mine;
    int pair[2] = {info_.local_rank, info_.local_size};
    std::vector<int> all(2 * info_.size);
    MPI_Allgather(pair, 2, MPI_INT, all.data(), 2, MPI_INT, MPI_COMM_WORLD);
    std::vector<int> lr(info_.size), ls(info_.size);
    for (int r = 0; r < info_.size; ++r) lr[r] = all[2 * r], ls[r] = all[2 * r + 1];
    auto node = nodes_from_local_ranks(lr, ls);
    info_.node = node[info_.rank];
    info_.num_nodes = node.back() + 1;
    g_mpi_spans_nodes = info_.num_nodes > 1;  // decides how this process leaves MPI (leave_mpi_at_exit)
    return;
  }
  // Store rendezvous: every rank announces itself, bumps a counter and polls it. The absent ranks are looked
  // up now and then, so that even when the store's host gives up first we can still say whom we were waiting
  // for.
  auto start = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
        .count();
  };
  std::vector<int> missing;
  for (int r = 0; r < info_.size; ++r) missing.push_back(r);
  auto refresh_missing = [&] {
    std::vector<int> still;
    for (int r : missing)
      if (!store_->check({str("arrive/", r)})) still.push_back(r);
    missing = still;
  };
  auto missing_str = [&] {
    std::string s;
    for (size_t i = 0; i < missing.size(); ++i) s += str(i ? "," : "", missing[i]);
    return s.empty() ? std::string("?") : s;
  };
  try {
    store_->set_string(str("arrive/", info_.rank), std::to_string(::getpid()));
    store_->add("arrivals", 1);
    auto nap = std::chrono::milliseconds(2);
    auto last_refresh = start;
    while (store_->add("arrivals", 0) < info_.size) {
      auto now = std::chrono::steady_clock::now();
      if (now - start > timeout) {
        refresh_missing();
        mark_comm_failed();
        fail("bootstrap: timed out after ", elapsed_ms(), " ms waiting for rank(s) ", missing_str(), " of ",
             info_.size, " to join ", store_->describe(), " (", job_tag(), ")");
      }
      if (now - last_refresh > std::chrono::milliseconds(250)) {
        refresh_missing();
        last_refresh = now;
      }
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::milliseconds(50));
    }
  } catch (const Error& e) {
    if (std::string(e.what()).rfind("bootstrap:", 0) == 0) throw;
    mark_comm_failed();
    fail("bootstrap: lost ", store_->describe(), " after ", elapsed_ms(), " ms while waiting for rank(s) ",
         missing_str(), " of ", info_.size, " to join (", job_tag(), "): ", e.what());
  }
  if (info_.rank == 0) store_->set_string("nonce", std::to_string(mine));
  nonce_ = std::stoull(store_->get_string("nonce", timeout));
  check_node_layout(timeout);
}

// Each rank's LOCAL_RANK/LOCAL_WORLD_SIZE is checked on its own by parse_launch_env; ranks that disagree with
// each other (rank 0 says 2 per node, rank 1 says 1) would build node segments the others never join and wait
// out the whole timeout. Compare every rank's pair, as the MPI path does, and name them.
void Bootstrap::check_node_layout(Store::Timeout timeout) {
  const auto all = allgather_string(str(info_.local_rank, " ", info_.local_size), "node_layout", timeout);
  std::vector<int> lr, ls;
  std::string seen;
  for (size_t r = 0; r < all.size(); ++r) {
    int a = -1, b = -1;
    std::sscanf(all[r].c_str(), "%d %d", &a, &b);
    lr.push_back(a);
    ls.push_back(b);
    if (r < 8) seen += str(r ? ", " : "", "rank ", r, ": ", a, "/", b);
  }
  std::string error;
  try {
    auto node = nodes_from_local_ranks(lr, ls);
    info_.node = node[static_cast<size_t>(info_.rank)];
    info_.num_nodes = node.back() + 1;
  } catch (const Error& e) {
    error = e.what();
  }
  if (error.empty()) return;
  // Every rank reaches the same verdict. Rank 0 hosts the store: it leaves only once every rank has said it
  // is done with the store, so none is cut off mid-read and fails with "connection lost" instead.
  store_->add("node_layout_failed", 1);
  if (info_.rank == 0) {
    const auto until =
        std::chrono::steady_clock::now() + std::min<Store::Timeout>(timeout, std::chrono::seconds(10));
    while (store_->add("node_layout_failed", 0) < info_.size && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  mark_comm_failed();
  fail("bootstrap: ranks disagree on LOCAL_RANK/LOCAL_WORLD_SIZE (", seen, all.size() > 8 ? ", ..." : "",
       "): ", error);
}

std::vector<std::string> Bootstrap::allgather_string(const std::string& mine, const std::string& tag,
                                                     Store::Timeout timeout) {
  std::vector<std::string> out(info_.size);
  if (info_.size == 1) {
    out[0] = mine;
    return out;
  }
  if (mpi()) {
    int len = static_cast<int>(mine.size());
    std::vector<int> lens(info_.size), displs(info_.size);
    MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < info_.size; ++r) displs[r] = total, total += lens[r];
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR,
                   MPI_COMM_WORLD);
    for (int r = 0; r < info_.size; ++r) out[r] = all.substr(displs[r], lens[r]);
    return out;
  }
  int round = exchange_round_++;
  store_->set_string(str("ag/", tag, "/", round, "/", info_.rank), mine);
  for (int r = 0; r < info_.size; ++r)
    out[r] = store_->get_string(str("ag/", tag, "/", round, "/", r), timeout);
  return out;
}

}  // namespace ct::comm

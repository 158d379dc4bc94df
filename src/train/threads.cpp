#include "train/threads.h"

#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "core/error.h"
#include "core/log.h"

namespace ct::train {

namespace {

std::string cpu_list() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "?";
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) ++e;
    if (!out.empty()) out += ',';
    out += std::to_string(c);
    if (e > c) out += str("-", e);
    c = e;
  }
  return out;
}

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  return CPU_COUNT(&set);
}

}  // namespace

ThreadPlan plan_threads(int local_world, int cpus, const char* omp_env, const char* affinity) {
  ThreadPlan p;
  p.cpus = std::max(1, cpus);
  if (affinity && *affinity && std::strcmp(affinity, "auto") != 0) {
    const auto cores = comm::parse_core_list(affinity);
    p.comm_cores = static_cast<int>(std::set<int>(cores.begin(), cores.end()).size());
  }
  if (omp_env && *omp_env) {
    char* end = nullptr;
    const long v = std::strtol(omp_env, &end, 10);
    CT_CHECK(end != omp_env && *end == 0 && v >= 1 && v <= 4096, "OMP_NUM_THREADS='", omp_env,
             "': expected a positive integer");
    p.threads = static_cast<int>(v);
    p.from_env = true;
  } else {
    p.threads = std::max(1, (p.cpus - p.comm_cores) / std::max(1, local_world));
  }
  p.oversubscribed = p.threads * local_world + p.comm_cores > p.cpus;
  return p;
}

ThreadPlan apply_thread_plan(int local_world) {
  const ThreadPlan p = plan_threads(local_world, affinity_cpus(), std::getenv("OMP_NUM_THREADS"),
                                    std::getenv("CCL_WORKER_AFFINITY"));
  omp_set_num_threads(p.threads);
  return p;
}

std::string rank_map(const DistContext& d, const ThreadPlan& plan) {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string mine = str("rank ", d.rank, " -> node ", d.node, " (", host, ") -> ", plan.threads,
                         plan.threads == 1 ? " thread" : " threads",
                         plan.from_env ? " (OMP_NUM_THREADS)" : "", " on CPUs ", cpu_list());
  std::string all;
  for (const auto& line : allgather_strings(d, mine)) all += (all.empty() ? "" : "\n") + line;
  if (plan.oversubscribed)
    log::warn("rank ", d.rank, ": ", d.local_world, " ranks x ", plan.threads, " threads",
              plan.comm_cores ? str(" + ", plan.comm_cores, " pinned comm cores") : std::string(), " on ",
              plan.cpus, " CPUs: the node is oversubscribed (set OMP_NUM_THREADS lower)");
  return all;
}

}  // namespace ct::train

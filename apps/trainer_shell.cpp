#include "apps/trainer_shell.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "apps/command.h"
#include "core/error.h"
#include "core/log.h"
#include "train/stop_signal.h"
#include "train/threads.h"

namespace ct::app {

std::unique_ptr<comm::Communicator> communicator_for(const train::TrainingArguments& t) {
  comm::CommOptions o;
  if (!t.ddp_backend.empty()) o.backend = comm::parse_backend(t.ddp_backend);
  const char* env = std::getenv("CORETRAIN_COMM_TIMEOUT");
  o.timeout = env && *env ? comm::default_timeout()
                          : std::chrono::duration_cast<comm::Timeout>(std::chrono::seconds(t.ddp_timeout));
  return comm::make_communicator(o);
}

int run_training_command(const std::string& name, train::TrainingArguments& t,
                         const std::function<train::RunResult(const train::DistContext&)>& main,
                         train::RunResult* result) {
  auto comm = communicator_for(t);
  auto dist = train::dist_context(*comm);
  // HF's log_level_replica: processes other than rank 0 log warnings and errors only.
  if (dist.rank != 0 && log::level() < log::Level::warning) log::set_level(log::Level::warning);
  const auto plan = train::apply_thread_plan(dist.local_world);
  const std::string map = train::rank_map(dist, plan);
  if (dist.rank == 0) {
    log::info(comm->describe());
    for (size_t b = 0, e; b < map.size(); b = e + 1) {
      e = map.find('\n', b);
      if (e == std::string::npos) e = map.size();
      log::info(map.substr(b, e - b));
    }
  }
  try {
    train::RunResult r = main(dist);
    if (result) *result = std::move(r);
  } catch (const train::StopRequested& stop) {
    // Every rank stopped after the same step and the checkpoint is complete: 128 + signal, never 0.
    return stop.exit_status();
  } catch (const std::exception& e) {
    // Said while the communicator still lives: its teardown under mpiexec can end the process first.
    return report_error(name, e);
  }
  return 0;
}

void split_demo_batch(int64_t& bs, bool global, const train::DistContext& dist) {
  if (!global || dist.world <= 1 || bs % dist.world != 0) return;
  bs /= dist.world;
  if (dist.rank == 0)
    log::info("demo: ", dist.world, " ranks x batch ", bs, " (the demo's global batch of ", bs * dist.world,
              ")");
}

void on_node_writer(const train::DistContext& dist, const std::function<void()>& write) {
  std::string error;
  if (dist.local_rank == 0) {
    try {
      write();
    } catch (const Error& e) {
      error = e.what();
    }
  }
  // Doubles as the wait: no rank reads the files before its node's writer is done.
  const auto failed = train::allgather_u64(dist, error.empty() ? 0 : 1);
  if (!error.empty()) throw Error(error);
  for (int r = 0; r < dist.world; ++r)
    if (failed[static_cast<size_t>(r)])
      fail("rank ", r, " could not write the demo's files; its error says why");
}

void print_demo_result(const train::RunResult& result, const std::string& metric) {
  if (!result.train_metrics.empty()) {
    const double sps = result.train_metrics.value("train_samples_per_second", 0.0);
    const double runtime = result.train_metrics.value("train_runtime", 0.0);
    std::printf(
        "demo: %d %s, %.1f samples/s (%.1f per rank), gradient communication exposed %.1f%% of %.1f s\n",
        result.world, result.world == 1 ? "process" : "ranks", sps, sps / result.world,
        runtime > 0 ? 100.0 * result.comm_exposed_seconds / runtime : 0.0, runtime);
  }
  if (!metric.empty() && result.eval_metrics.contains(metric))
    std::printf("demo: %s %.4f on %lld held-out examples\n", metric.c_str(),
                result.eval_metrics.value(metric, 0.0),
                static_cast<long long>(result.eval_metrics.value("eval_samples", int64_t{0})));
}

}  // namespace ct::app

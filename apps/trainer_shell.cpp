#include "apps/trainer_shell.h"

#include <chrono>
#include <cstdlib>

#include "apps/command.h"
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

}  // namespace ct::app

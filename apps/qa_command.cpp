// `coretrain qa`: HF run_qa.py's command line (same flags, same output folder), and `coretrain qa --demo`,
// the built-in demo that needs no data or model: it generates a templated QA set, trains a small BERT from
// random init and prints EM/F1. Under mpirun or a torchrun-style environment it trains data-parallel: the
// communicator comes from the launch environment, --ddp_backend picks the collectives, --ddp_timeout bounds
// every wait. SIGTERM/SIGINT stop it gracefully (train/stop_signal.h): during training all ranks stop after
// the same step with a checkpoint and exit 128 + signal; elsewhere the process exits at once with 128 +
// signal.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/command.h"
#include "apps/trainer_shell.h"
#include "tasks/question_answering/qa_args.h"
#include "tasks/question_answering/run_qa.h"
#include "train/stop_signal.h"
#include "train/training_args.h"

namespace {

int run_qa_command(int argc, char** argv) {
  // Before any thread starts (communicator workers, OpenMP, oneDNN): every thread inherits the blocked mask.
  ct::train::install_stop_signals();
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = ct::tasks::parse_qa_args(args);
  if (parsed.help) {
    std::fputs(ct::tasks::qa_args_help().c_str(), stdout);
    return 0;
  }
  const bool demo = parsed.coretrain.demo;
  ct::train::RunResult result;
  int rank = 0;
  const int status = ct::app::run_training_command(
      "qa", parsed.training,
      [&](const ct::train::DistContext& dist) {
        rank = dist.rank;
        ct::app::split_demo_batch(parsed.training.per_device_train_batch_size,
                                  parsed.coretrain.demo_global_batch, dist);
        return ct::tasks::run_qa(std::move(parsed), dist);
      },
      &result);
  if (status != 0) return status;
  if (demo && rank == 0 && !result.eval_metrics.empty()) {
    ct::app::print_demo_result(result, "");
    std::printf("demo: exact_match %.2f  f1 %.2f on %lld held-out features\n",
                result.eval_metrics.value("eval_exact_match", 0.0), result.eval_metrics.value("eval_f1", 0.0),
                static_cast<long long>(result.eval_metrics.value("eval_samples", int64_t{0})));
  }
  return 0;
}

}  // namespace

CT_COMMAND("qa", "train/evaluate extractive QA with run_qa.py's flags (--demo: built-in demo)",
           run_qa_command);

// `coretrain qa`: HF run_qa.py's command line (same flags, same output folder), and `coretrain qa --demo`,
// the built-in demo that needs no data or model: it generates a templated QA set, trains a small BERT from
// random init and prints EM/F1.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/command.h"
#include "train/run_qa.h"
#include "train/training_args.h"

namespace {

int run_qa_command(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = ct::train::parse_qa_args(args);
  if (parsed.help) {
    std::fputs(ct::train::qa_args_help().c_str(), stdout);
    return 0;
  }
  const bool demo = parsed.coretrain.demo;
  auto result = ct::train::run_qa(std::move(parsed));
  if (demo && !result.eval_metrics.empty()) {
    std::printf("demo: exact_match %.2f  f1 %.2f on %lld held-out features\n",
                result.eval_metrics.value("eval_exact_match", 0.0), result.eval_metrics.value("eval_f1", 0.0),
                static_cast<long long>(result.eval_metrics.value("eval_samples", int64_t{0})));
  }
  return 0;
}

}  // namespace

CT_COMMAND("qa", "train/evaluate extractive QA with run_qa.py's flags (--demo: built-in demo)",
           run_qa_command);

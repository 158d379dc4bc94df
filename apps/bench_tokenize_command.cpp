// `coretrain bench tokenize`: times feature creation as `coretrain qa` does it before training (tokenize
// every question and context, cut the context into overlapping windows, label the answer span), through the
// same FeatureSet::build, and prints examples/s, features/s and tokens/s. bench/tokenize_vs_hf.sh runs it
// beside HF's Rust tokenizer on the same file and vocab.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/command.h"
#include "core/error.h"
#include "core/parallel.h"
#include "data/features.h"
#include "data/squad.h"
#include "text/tokenizer.h"
#include "train/model_source.h"
#include "train/threads.h"

namespace {

struct Pass {
  int threads = 0;
  double mean_s = 0, best_s = 0;
  int64_t features = 0, tokens = 0;
};

// Timed builds after one untimed one (first-touch allocation and cold caches are not what an epoch pays).
Pass time_builds(const std::vector<ct::data::Example>& examples, const ct::text::Tokenizer& tok,
                 const ct::data::FeatureOptions& fo, int iters) {
  using clock = std::chrono::steady_clock;
  Pass p;
  p.threads = ct::num_threads();
  double total = 0;
  p.best_s = 1e300;
  for (int it = 0; it <= iters; ++it) {
    const auto t0 = clock::now();
    ct::data::FeatureSet fs = ct::data::FeatureSet::build(examples, tok, fo);
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    if (it == 0) {
      p.features = fs.size();
      for (size_t i = 0; i < examples.size(); ++i) {
        const auto& te = fs.tokenized(static_cast<int64_t>(i));
        p.tokens += static_cast<int64_t>(te.question_ids.size() + te.context_ids.size());
      }
      continue;
    }
    CT_CHECK(fs.size() == p.features, "feature count changed between builds: ", p.features, " then ",
             fs.size());
    total += s;
    p.best_s = std::min(p.best_s, s);
  }
  p.mean_s = total / iters;
  return p;
}

int run_bench_tokenize(int argc, char** argv) {
  CLI::App app{"Time QA feature creation (tokenization + run_qa windows + labels) on a SQuAD file",
               "coretrain bench tokenize"};
  std::string train_file, tokenizer_name, model_name_or_path;
  int64_t max_seq_length = 384, doc_stride = 128;
  int threads = 0, iters = 3;
  bool json = false, no_single = false;
  app.add_option("--train_file", train_file, "SQuAD JSON / JSON lines / CSV, as `coretrain qa` reads it")
      ->required();
  app.add_option("--tokenizer_name", tokenizer_name, "folder with vocab.txt or tokenizer.json, or a Hub id");
  app.add_option("--model_name_or_path", model_name_or_path,
                 "the tokenizer's source when --tokenizer_name is not given (only its tokenizer is read)");
  app.add_option("--max_seq_length", max_seq_length, "tokens per feature")->check(ct::app::kPositive);
  app.add_option("--doc_stride", doc_stride, "overlap between windows of a long context")
      ->check(ct::app::kNonNegative);
  app.add_option("--threads", threads,
                 "OpenMP threads (default: as coretrain qa, OMP_NUM_THREADS or all CPUs)")
      ->check(ct::app::kPositive);
  app.add_option("--iters", iters, "timed builds (after one untimed)")->check(ct::app::kPositive);
  app.add_flag("--json", json, "one JSON object instead of text");
  app.add_flag("--no_single_thread", no_single, "skip the extra 1-thread pass when running more threads");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (tokenizer_name.empty() && model_name_or_path.empty())
    ct::fail("--tokenizer_name or --model_name_or_path: one is required");

  // Only the tokenizer's files: a Hub id given as --model_name_or_path must not pull the weights.
  ct::train::ModelArguments m;
  m.tokenizer_name = tokenizer_name.empty() ? model_name_or_path : tokenizer_name;
  const std::string tok_dir = ct::train::localize_model_sources(m).tokenizer_name;
  const ct::text::Tokenizer tok = ct::text::Tokenizer::from_dir(tok_dir);

  ct::data::SquadReadStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<ct::data::Example> examples = ct::data::read_squad(train_file, &stats);
  const double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CT_CHECK(!examples.empty(), "--train_file: ", train_file, " holds no usable examples");

  if (threads > 0) {
    omp_set_num_threads(threads);
  } else {
    ct::train::apply_thread_plan(1);
  }
  ct::data::FeatureOptions fo;
  fo.max_seq_length = max_seq_length;
  fo.doc_stride = doc_stride;

  std::vector<Pass> passes{time_builds(examples, tok, fo, iters)};
  if (passes[0].threads > 1 && !no_single) {
    omp_set_num_threads(1);
    passes.push_back(time_builds(examples, tok, fo, iters));
    CT_CHECK(passes[1].features == passes[0].features, "1-thread build made ", passes[1].features,
             " features, ", passes[0].threads, " threads made ", passes[0].features);
  }

  const double n = static_cast<double>(examples.size());
  if (json) {
    std::printf(
        "{\"examples\": %zu, \"skipped\": %lld, \"features\": %lld, \"tokens\": %lld, "
        "\"max_seq_length\": %lld, \"doc_stride\": %lld, \"iters\": %d, \"read_s\": %.4f",
        examples.size(), static_cast<long long>(stats.skipped), static_cast<long long>(passes[0].features),
        static_cast<long long>(passes[0].tokens), static_cast<long long>(max_seq_length),
        static_cast<long long>(doc_stride), iters, read_s);
    for (size_t k = 0; k < passes.size(); ++k) {
      const Pass& p = passes[k];
      // The run's own thread count unprefixed; the 1-thread pass as "single_thread_*".
      const char* pre = k == 0 ? "" : "single_thread_";
      std::printf(
          ", \"%sthreads\": %d, \"%sseconds\": %.5f, \"%sbest_seconds\": %.5f, \"%sexamples_per_s\": %.1f, "
          "\"%sfeatures_per_s\": %.1f, \"%stokens_per_s\": %.1f",
          pre, p.threads, pre, p.mean_s, pre, p.best_s, pre, n / p.mean_s, pre,
          static_cast<double>(p.features) / p.mean_s, pre, static_cast<double>(p.tokens) / p.mean_s);
    }
    std::printf("}\n");
    return 0;
  }
  std::printf(
      "bench tokenize: %s: %zu examples (%lld skipped), tokenizer %s (%lld tokens), max_seq_length %lld, "
      "doc_stride %lld; %d timed builds after 1 untimed; reading the file took %.3f s (not timed below)\n",
      train_file.c_str(), examples.size(), static_cast<long long>(stats.skipped), tok_dir.c_str(),
      static_cast<long long>(tok.vocab_size()), static_cast<long long>(max_seq_length),
      static_cast<long long>(doc_stride), iters, read_s);
  std::printf("features %lld  tokens %lld (questions + contexts, once per example)\n",
              static_cast<long long>(passes[0].features), static_cast<long long>(passes[0].tokens));
  for (const Pass& p : passes) {
    std::printf(
        "%d thread%s: %.4f s per build (best %.4f)  examples/s %.0f  features/s %.0f  tokens/s %.0f\n",
        p.threads, p.threads == 1 ? "" : "s", p.mean_s, p.best_s, n / p.mean_s,
        static_cast<double>(p.features) / p.mean_s, static_cast<double>(p.tokens) / p.mean_s);
  }
  return 0;
}

}  // namespace

CT_COMMAND("bench tokenize", "time QA feature creation (tokenize + windows) on a SQuAD file",
           run_bench_tokenize);

// `coretrain bench tokenize-text`: times a tokenizer.json (any model: BPE, Unigram, WordPiece) on the lines
// of a text file, each line one encode with the file's post-processor, code-point offsets as Python gets
// them; one thread and all of --threads. bench/tokenize_text_vs_hf.js times HF's Rust tokenizer on the same
// file.
#include <omp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/command.h"
#include "core/error.h"
#include "text/hf_tokenizer.h"

namespace {

struct Pass {
  int threads = 0;
  double best_s = 1e300;
  int64_t tokens = 0;
};

Pass time_pass(const ct::text::HfTokenizer& tok, const std::vector<std::string>& lines, int threads,
               int iters) {
  Pass p;
  p.threads = threads;
  // One untimed pass first (caches, first-touch allocation).
  for (int it = 0; it <= iters; ++it) {
    int64_t tokens = 0;
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64) reduction(+ : tokens)
    for (size_t i = 0; i < lines.size(); ++i) {
      tokens += static_cast<int64_t>(tok.encode(lines[i], true, ct::text::OffsetUnit::kChar).size());
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    p.tokens = tokens;
    if (it > 0) p.best_s = std::min(p.best_s, s);
  }
  return p;
}

int run_bench_tokenize_text(int argc, char** argv) {
  CLI::App app{"Time a tokenizer.json on the lines of a text file", "coretrain bench tokenize-text"};
  std::string tokenizer, text_file;
  int threads = 0, iters = 3;
  bool json = false;
  app.add_option("--tokenizer_name", tokenizer, "tokenizer.json, or a folder holding one")->required();
  app.add_option("--text_file", text_file, "UTF-8 text, one input per line")->required();
  app.add_option("--threads", threads, "threads of the second pass (default: OMP_NUM_THREADS or all CPUs)")
      ->check(ct::app::kPositive);
  app.add_option("--iters", iters, "timed passes (after one untimed); the best is reported")
      ->check(ct::app::kPositive);
  app.add_flag("--json", json, "one JSON object instead of text");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const ct::text::HfTokenizer tok = ct::text::HfTokenizer::from_file(tokenizer);
  std::ifstream in(text_file);
  CT_CHECK(in, "--text_file: cannot read ", text_file);
  std::vector<std::string> lines;
  int64_t bytes = 0;
  for (std::string line; std::getline(in, line);) {
    bytes += static_cast<int64_t>(line.size());
    lines.push_back(std::move(line));
  }
  CT_CHECK(!lines.empty(), "--text_file: ", text_file, " is empty");
  if (threads <= 0) threads = omp_get_max_threads();
  std::vector<Pass> passes{time_pass(tok, lines, 1, iters)};
  if (threads > 1) passes.push_back(time_pass(tok, lines, threads, iters));
  for (const Pass& p : passes) {
    const double mb_s = static_cast<double>(bytes) / 1e6 / p.best_s;
    const double tok_s = static_cast<double>(p.tokens) / p.best_s;
    if (json) {
      std::printf(
          "{\"tokenizer\": \"%s\", \"lines\": %zu, \"bytes\": %lld, \"tokens\": %lld, \"threads\": %d, "
          "\"best_seconds\": %.4f, \"tokens_per_s\": %.0f, \"mb_per_s\": %.2f}\n",
          tokenizer.c_str(), lines.size(), static_cast<long long>(bytes), static_cast<long long>(p.tokens),
          p.threads, p.best_s, tok_s, mb_s);
    } else {
      std::printf("%s: %zu lines, %.1f MB, %lld tokens; %d thread%s: best %.4f s, %.0f tokens/s, %.2f MB/s\n",
                  tokenizer.c_str(), lines.size(), static_cast<double>(bytes) / 1e6,
                  static_cast<long long>(p.tokens), p.threads, p.threads == 1 ? "" : "s", p.best_s, tok_s,
                  mb_s);
    }
  }
  return 0;
}

}  // namespace

CT_COMMAND("bench tokenize-text",
           "time a tokenizer.json (BPE, Unigram, WordPiece) on the lines of a text file",
           run_bench_tokenize_text);

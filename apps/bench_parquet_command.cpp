// `coretrain bench parquet FILE`: times reading a Parquet file (open + footer + every requested column of
// every row group, assembled into rows) and, with --squad, the SQuAD examples `coretrain qa` builds from it.
// bench/parquet_vs_hyparquet.sh runs it beside hyparquet (npm) on a SQuAD-train-sized file.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/command.h"
#include "core/error.h"
#include "parquet/parquet_file.h"
#include "tasks/question_answering/squad.h"

namespace {

int run_bench_parquet(int argc, char** argv) {
  CLI::App app{"Time reading a Parquet file into rows (and SQuAD examples with --squad)",
               "coretrain bench parquet"};
  std::string file, columns;
  int iters = 3;
  bool squad = false;
  app.add_option("file", file, "a .parquet file")->required();
  app.add_option("--columns", columns, "comma-separated top-level columns (default: all)");
  app.add_option("--iters", iters, "timed reads (after one untimed)")->check(ct::app::kPositive);
  app.add_flag("--squad", squad, "also time read_squad (rows -> SQuAD examples with byte offsets)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  std::vector<std::string> cols;
  std::stringstream ss(columns);
  for (std::string c; std::getline(ss, c, ',');)
    if (!c.empty()) cols.push_back(c);
  using clock = std::chrono::steady_clock;
  auto time_it = [&](auto&& fn) {
    double best = 1e300, total = 0;
    for (int it = 0; it <= iters; ++it) {
      const auto t0 = clock::now();
      fn();
      const double s = std::chrono::duration<double>(clock::now() - t0).count();
      if (it == 0) continue;
      best = std::min(best, s);
      total += s;
    }
    return std::pair{total / iters, best};
  };
  int64_t rows = 0;
  const auto [mean, best] = time_it([&] {
    auto f = ct::parquet::ParquetFile::open(file);
    rows = f->read(cols).num_rows;
  });
  std::printf(
      "bench parquet: %s: %lld rows; open + read %s: %.4f s per read (best %.4f), %d timed after 1 untimed\n",
      file.c_str(), static_cast<long long>(rows), cols.empty() ? "all columns" : columns.c_str(), mean, best,
      iters);
  if (squad) {
    size_t n = 0;
    const auto [smean, sbest] = time_it([&] { n = ct::tasks::read_squad(file).size(); });
    std::printf("read_squad: %zu examples: %.4f s per read (best %.4f)\n", n, smean, sbest);
  }
  return 0;
}

}  // namespace

CT_COMMAND("bench parquet", "time reading a Parquet file into rows (a SQuAD file with --squad)",
           run_bench_parquet);

#include "train/run_setup.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/hash.h"
#include "core/log.h"
#include "train/checkpoint.h"
#include "train/tensorboard.h"

namespace ct::train {

std::string prepare_output_dir(const TrainingArguments& t, const DistContext& dist) {
  if (!t.do_train && !t.do_eval && !t.do_predict)
    fail("nothing to do: give --do_train, --do_eval and/or --do_predict");
  // The startup rule comes before anything is written into output_dir. Rank 0 decides (it is the one that
  // writes there) and tells the others, so every rank resumes from the same checkpoint.
  std::string resume, decision;
  if (is_world_process_zero(dist)) {
    try {
      // On an elastic restart (TORCHELASTIC_RESTART_COUNT / CORETRAIN_RDZV_ROUND > 0) the last checkpoint
      // wins over --overwrite_output_dir; the log says why it resumes or starts over.
      const auto rd = decide_resume(t.output_dir, t.overwrite_output_dir, t.resume_from_checkpoint,
                                    t.do_train, elastic_restart_from_env());
      if (rd.warning)
        log::warn(rd.why);
      else if (!rd.why.empty())
        log::info(rd.why);
      resume = rd.checkpoint;
      std::error_code ec;
      std::filesystem::create_directories(t.output_dir, ec);
      if (ec) fail("--output_dir: cannot create ", t.output_dir, " (", ec.message(), ")");
      remove_stale_temp_checkpoints(t.output_dir);
      decision = "ok\n" + resume;
    } catch (const Error& e) {
      decision = std::string("error\n") + e.what();
      broadcast_string(dist, &decision);
      throw;
    }
  }
  broadcast_string(dist, &decision);
  if (!is_world_process_zero(dist)) {
    const auto nl = decision.find('\n');
    if (decision.compare(0, nl, "ok") != 0) fail("rank 0 stopped: ", decision.substr(nl + 1));
    resume = decision.substr(nl + 1);
  }
  return resume;
}

void check_same_arguments(const nlohmann::json& j, const DistContext& dist) {
  if (!dist.distributed()) return;
  std::string mine = j.dump(), zero = mine;
  broadcast_string(dist, &zero);
  std::string diff;
  if (mine != zero) {
    const auto z = nlohmann::json::parse(zero);
    for (auto& [k, x] : j.items())
      if (!z.contains(k) || z[k] != x)
        diff += str(diff.empty() ? "" : ", ", "--", k, " ", x.dump(),
                    " (rank 0: ", z.contains(k) ? z[k].dump() : std::string("unset"), ")");
  }
  // Every rank fails with the same explanation: the first differing rank sends its flags (on this failure
  // path only), so rank 0's message, often the one a user reads, names the flag too.
  const auto all = allgather_u64(dist, Hasher().str(mine).digest());
  std::string ranks;
  int first = -1;
  for (int r = 1; r < dist.world; ++r)
    if (all[static_cast<size_t>(r)] != all[0]) {
      ranks += str(ranks.empty() ? "" : ", ", r);
      if (first < 0) first = r;
    }
  if (first < 0) return;
  std::string shown = dist.rank == first ? diff : std::string();
  broadcast_string(dist, &shown, first);
  fail("the command line differs from rank 0's on rank(s) ", ranks, " (rank ", first, ": ", shown, ")",
       dist.rank != first && !diff.empty() ? "; here: " + diff : std::string());
}

nlohmann::json command_line_json(const std::vector<std::string>& argv) {
  // Keyed by flag, so a difference is reported as "--seed 43 (rank 0: 42)"; positional arguments (a JSON
  // arguments file) by their place.
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0) {
      j[str("argv[", i, "]")] = a;
      continue;
    }
    std::string name = a.substr(2), value = "true";
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (i + 1 < argv.size() && argv[i + 1].rfind("--", 0) != 0) {
      value = argv[++i];
    }
    if (name == "local_rank" || name == "local-rank") continue;  // torch.distributed.launch's, per process
    j[name] = value;
  }
  return j;
}

void resolve_logging_dir(TrainingArguments& t, const DistContext& dist) {
  if (!t.logging_dir.empty()) return;
  std::string dir = is_world_process_zero(dist) ? default_logging_dir(t.output_dir) : std::string();
  broadcast_string(dist, &dir);
  t.logging_dir = dir;
}

std::string begin_task_run(TrainingArguments& t, const std::vector<std::string>& argv,
                           const DistContext& dist, const std::vector<std::string>& notes) {
  for (const auto& n : notes) log::info(n);
  std::string resume = prepare_output_dir(t, dist);
  check_same_arguments(command_line_json(argv), dist);
  resolve_logging_dir(t, dist);
  return resume;
}

std::function<float*(int64_t)> gradient_allocator(const DistContext& dist) {
  if (!dist.distributed()) return {};
  return [comm = dist.comm](int64_t n) {
    return static_cast<float*>(comm->shm_alloc(n * static_cast<int64_t>(sizeof(float))));
  };
}

void print_metrics(const std::string& split, const nlohmann::json& m) {
  std::printf("***** %s metrics *****\n", split.c_str());
  for (const auto& [k, v] : m.items()) {
    // Python prints a non-finite float as inf / -inf / nan (run_mlm's perplexity on overflow).
    std::string text = v.dump();
    if (v.is_number_float() && !std::isfinite(v.get<double>()))
      text = std::isnan(v.get<double>()) ? "nan" : v.get<double>() > 0 ? "inf" : "-inf";
    std::printf("  %-26s = %s\n", k.c_str(), text.c_str());
  }
  std::fflush(stdout);
}

}  // namespace ct::train

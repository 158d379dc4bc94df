#include "train/checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "model/safetensors.h"
#include "train/python_json.h"

namespace ct::train {
namespace stdfs = std::filesystem;

namespace {

const std::regex kCheckpointName("^checkpoint-([0-9]+)$");
const std::regex kTempName("^checkpoint-[0-9]+\\.tmp-[0-9]+$");

bool dir_is_empty(const std::string& dir) {
  std::error_code ec;
  return stdfs::directory_iterator(dir, ec) == stdfs::directory_iterator();
}

}  // namespace

int64_t checkpoint_step(const std::string& path) {
  std::smatch m;
  const std::string name = stdfs::path(path).filename().string();
  if (!std::regex_match(name, m, kCheckpointName)) return -1;
  return std::stoll(m[1].str());
}

std::vector<std::pair<int64_t, std::string>> list_checkpoints(const std::string& output_dir) {
  std::vector<std::pair<int64_t, std::string>> out;
  std::error_code ec;
  if (!stdfs::is_directory(output_dir, ec)) return out;
  for (const auto& e : stdfs::directory_iterator(output_dir, ec)) {
    if (!e.is_directory()) continue;
    int64_t step = checkpoint_step(e.path().string());
    if (step >= 0) out.emplace_back(step, e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> get_last_checkpoint(const std::string& output_dir) {
  auto all = list_checkpoints(output_dir);
  if (all.empty()) return std::nullopt;
  return all.back().second;
}

std::vector<std::string> rotate_checkpoints(const std::string& output_dir, int64_t limit,
                                            const std::string& keep) {
  std::vector<std::string> removed;
  if (limit <= 0) return removed;
  auto all = list_checkpoints(output_dir);
  // HF: the best checkpoint survives; with limit 1 and a best that is not the newest, two stay.
  const bool keep_is_older =
      !keep.empty() && !all.empty() && stdfs::exists(keep) && !stdfs::equivalent(all.back().second, keep);
  const int64_t effective = (limit == 1 && keep_is_older) ? 2 : limit;
  int64_t excess = static_cast<int64_t>(all.size()) - effective;
  for (const auto& [step, path] : all) {
    if (excess <= 0) break;
    if (!keep.empty() && stdfs::exists(keep) && stdfs::equivalent(path, keep)) continue;
    std::error_code ec;
    stdfs::remove_all(path, ec);
    if (ec) fail(path, ": cannot delete old checkpoint (", ec.message(), ")");
    log::info("Deleting older checkpoint [", path, "] due to args.save_total_limit");
    removed.push_back(path);
    --excess;
  }
  return removed;
}

int remove_stale_temp_checkpoints(const std::string& output_dir) {
  int n = 0;
  std::error_code ec;
  if (!stdfs::is_directory(output_dir, ec)) return 0;
  for (const auto& e : stdfs::directory_iterator(output_dir, ec)) {
    if (!std::regex_match(e.path().filename().string(), kTempName)) continue;
    stdfs::remove_all(e.path(), ec);
    log::warn("removed ", e.path().string(), " (a checkpoint a stopped run did not finish)");
    ++n;
  }
  return n;
}

std::string decide_resume(const std::string& output_dir, bool overwrite_output_dir,
                          const std::string& resume_from_checkpoint, bool do_train) {
  return decide_resume(output_dir, overwrite_output_dir, resume_from_checkpoint, do_train, ElasticRestart{})
      .checkpoint;
}

std::string ElasticRestart::describe() const {
  std::string s;
  if (restart_count > 0) s = str("TORCHELASTIC_RESTART_COUNT=", restart_count);
  if (rdzv_round > 0) s += str(s.empty() ? "" : ", ", "CORETRAIN_RDZV_ROUND=", rdzv_round);
  return s;
}

ElasticRestart elastic_restart_from_env() {
  ElasticRestart r;
  auto read = [&r](const char* name) -> int64_t {
    const char* v = std::getenv(name);
    if (!v) return 0;
    r.under_agent = true;
    if (!*v) return 0;
    const std::string s = v;
    if (s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18)
      fail(name, "=", s, ": expected a non-negative integer");
    return std::stoll(s);
  };
  r.restart_count = read("TORCHELASTIC_RESTART_COUNT");
  r.rdzv_round = read("CORETRAIN_RDZV_ROUND");
  return r;
}

ResumeDecision decide_resume(const std::string& output_dir, bool overwrite_output_dir,
                             const std::string& resume_from_checkpoint, bool do_train,
                             const ElasticRestart& restart) {
  std::error_code ec;
  const bool exists = stdfs::exists(output_dir, ec);
  if (exists && !stdfs::is_directory(output_dir, ec))
    fail("--output_dir: ", output_dir, " is not a directory");
  ResumeDecision d;
  const std::string elastic =
      restart.restarted() ? str("elastic restart (", restart.describe(), "): ") : std::string();
  if (!resume_from_checkpoint.empty() && resume_from_checkpoint != "false" &&
      resume_from_checkpoint != "False") {
    if (resume_from_checkpoint == "true" || resume_from_checkpoint == "True") {
      auto last = get_last_checkpoint(output_dir);
      if (!last)
        fail("--resume_from_checkpoint: no valid checkpoint found in output directory (", output_dir, ")");
      d.checkpoint = *last;
    } else {
      if (!stdfs::is_directory(resume_from_checkpoint, ec))
        fail("--resume_from_checkpoint: ", resume_from_checkpoint, " is not a directory");
      if (!stdfs::exists(stdfs::path(resume_from_checkpoint) / kTrainerStateFile, ec))
        fail("--resume_from_checkpoint: ", resume_from_checkpoint, " has no ", kTrainerStateFile,
             " (not a complete checkpoint)");
      d.checkpoint = resume_from_checkpoint;
    }
    if (!do_train) d.checkpoint.clear();
    if (!d.checkpoint.empty() && restart.restarted())
      d.why = str(elastic, "resuming from ", d.checkpoint, " as --resume_from_checkpoint says");
    return d;
  }
  if (!do_train) return d;
  if (restart.restarted()) {
    // An elastic restart continues the job: --overwrite_output_dir was meant for its first start.
    auto last = exists ? get_last_checkpoint(output_dir) : std::nullopt;
    if (last) {
      d.checkpoint = *last;
      d.why =
          str(elastic, "resuming from the last complete checkpoint ", *last,
              overwrite_output_dir ? " (--overwrite_output_dir applies to the job's first start only)" : "");
    } else {
      d.why = str(elastic, "no complete checkpoint-N in ", output_dir, " yet; training from scratch");
    }
    return d;
  }
  if (exists && overwrite_output_dir && restart.under_agent) {
    if (auto old = get_last_checkpoint(output_dir)) {
      d.why =
          str("--overwrite_output_dir: training from scratch, but ", output_dir, " still holds ", *old,
              " of an earlier run: if the agent restarts this job before it saves a newer checkpoint, the "
              "restart resumes from that one");
      d.warning = true;
    }
  }
  if (!exists || overwrite_output_dir) return d;
  auto last = get_last_checkpoint(output_dir);
  if (!last) {
    // Leftover temp folders of a killed run alone do not make the directory "used".
    bool only_temps = true;
    for (const auto& e : stdfs::directory_iterator(output_dir, ec))
      only_temps &= std::regex_match(e.path().filename().string(), kTempName);
    if (!dir_is_empty(output_dir) && !only_temps)
      fail("--output_dir: ", output_dir,
           " already exists and is not empty; use --overwrite_output_dir to overcome (it holds no "
           "checkpoint-N "
           "to resume from)");
    return d;
  }
  d.checkpoint = *last;
  d.why =
      str("Checkpoint detected, resuming training at ", *last,
          ". To avoid this behavior, change the `--output_dir` or add `--overwrite_output_dir` to train from "
          "scratch.");
  return d;
}

CheckpointWriter::CheckpointWriter(const std::string& output_dir, int64_t step) {
  final_ = (stdfs::path(output_dir) / ("checkpoint-" + std::to_string(step))).string();
  temp_ = final_ + ".tmp-" + std::to_string(::getpid());
  std::error_code ec;
  stdfs::remove_all(temp_, ec);
  stdfs::create_directories(temp_, ec);
  if (ec) fail(temp_, ": cannot create checkpoint folder (", ec.message(), ")");
}

CheckpointWriter::~CheckpointWriter() {
  if (committed_) return;
  std::error_code ec;
  stdfs::remove_all(temp_, ec);
}

void CheckpointWriter::commit() {
  fs::commit_dir(temp_, final_, /*replace=*/true);
  committed_ = true;
}

void save_optimizer_state(const std::string& path, const OptimizerState& s) {
  const int64_t n = static_cast<int64_t>(s.exp_avg.size());
  std::vector<model::SafetensorWrite> tensors;
  const bool sgd = s.optim == "sgd";
  tensors.push_back({sgd ? "momentum_buffer" : "exp_avg", "F32", {n}, s.exp_avg.data()});
  if (!sgd) {
    CT_ASSERT(static_cast<int64_t>(s.exp_avg_sq.size()) == n);
    tensors.push_back({"exp_avg_sq", "F32", {n}, s.exp_avg_sq.data()});
  }
  model::write_safetensors(path, std::move(tensors),
                           {{"format", "coretrain-optimizer"},
                            {"version", "1"},
                            {"optim", s.optim},
                            {"step", std::to_string(s.step)},
                            {"num_params", std::to_string(n)}},
                           /*sort_by_name=*/true);
}

OptimizerState load_optimizer_state(const std::string& path, int64_t num_params) {
  auto file = model::SafetensorsFile::open(path);
  const auto& meta = file.metadata();
  auto get = [&](const char* key) -> std::string {
    auto it = meta.find(key);
    if (it == meta.end()) fail(path, ": __metadata__ lacks '", key, "' (not a coretrain optimizer state)");
    return it->second;
  };
  if (get("format") != "coretrain-optimizer") fail(path, ": __metadata__.format is not coretrain-optimizer");
  if (get("version") != "1") fail(path, ": optimizer state version ", get("version"), ", expected 1");
  OptimizerState s;
  s.optim = get("optim");
  try {
    s.step = std::stoll(get("step"));
  } catch (const std::exception&) {
    fail(path, ": __metadata__.step is not an integer");
  }
  const bool sgd = s.optim == "sgd";
  for (const char* name : sgd ? std::vector<const char*>{"momentum_buffer"}
                              : std::vector<const char*>{"exp_avg", "exp_avg_sq"}) {
    const auto& t = file.at(name);
    if (t.numel() != num_params)
      fail(path, ": tensor ", name, " has ", t.numel(), " elements, the model has ", num_params,
           " parameters");
    std::vector<float> v(static_cast<size_t>(num_params));
    file.read_f32(t, v.data());
    (std::string(name) == "exp_avg_sq" ? s.exp_avg_sq : s.exp_avg) = std::move(v);
  }
  return s;
}

void write_json(const std::string& path, const nlohmann::json& j, int indent) {
  fs::write_file_atomic(path, dump_python_json(j, indent) + "\n");
}

nlohmann::json read_json(const std::string& path) {
  try {
    return parse_python_json(fs::read_file(path));
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": not valid JSON (", e.what(), ")");
  }
}

}  // namespace ct::train

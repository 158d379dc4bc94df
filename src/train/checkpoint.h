// Checkpoint folders as the HF Trainer lays them out (output_dir/checkpoint-N/), written atomically: every
// file goes into "checkpoint-N.tmp-<pid>", the folder is fsynced and renamed, so a killed run leaves at most
// a temp folder that get_last_checkpoint never matches (^checkpoint-(\d+)$). Also the startup rule for
// output_dir and save_total_limit rotation.
//
// Our own state files (HF's optimizer.pt / scheduler.pt / rng_state.pth are torch pickles we do not write):
//   optimizer.safetensors  tensors "exp_avg", "exp_avg_sq" (adamw) or "momentum_buffer" (sgd), each
//   [num_params]
//                          f32 in slab order; __metadata__ {format: "coretrain-optimizer", version: "1",
//                          optim, step, num_params}
//   scheduler.json         {lr_scheduler_type, base_lr, warmup_steps, total_steps, last_epoch, last_lr}
//   rng_state.json         {seed, data_seed, dropout_seed, epoch, global_step, micro_step, generator {seed,
//                          offset}} (rng_state_{rank}.json when world > 1)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ct::train {

inline constexpr const char* kOptimizerFile = "optimizer.safetensors";
inline constexpr const char* kSchedulerFile = "scheduler.json";
inline constexpr const char* kTrainerStateFile = "trainer_state.json";
inline constexpr const char* kTrainingArgsFile = "training_args.json";

// Checkpoint folders of output_dir by step, ascending; temp folders and other names are ignored.
std::vector<std::pair<int64_t, std::string>> list_checkpoints(const std::string& output_dir);
// The highest-step checkpoint folder, or nullopt (HF get_last_checkpoint).
std::optional<std::string> get_last_checkpoint(const std::string& output_dir);
// Step N of a "checkpoint-N" path; -1 when the name does not match.
int64_t checkpoint_step(const std::string& path);

// Deletes the oldest checkpoints beyond `limit` (limit <= 0: keep all), never `keep` (the best one). Returns
// the removed folders.
std::vector<std::string> rotate_checkpoints(const std::string& output_dir, int64_t limit,
                                            const std::string& keep = "");
// Removes "checkpoint-N.tmp-*" folders a killed run left behind; returns how many.
int remove_stale_temp_checkpoints(const std::string& output_dir);

// run_qa's startup rule, with resume_from_checkpoint ("", "true"/"True" for the latest, or a path):
// a path must be a checkpoint folder (error naming --resume_from_checkpoint otherwise); "true" with none in
// output_dir is an error; a non-empty output_dir without checkpoints and without overwrite is an error naming
// --overwrite_output_dir; with checkpoints and no overwrite, the latest is resumed. Returns the folder to
// resume from or "".
std::string decide_resume(const std::string& output_dir, bool overwrite_output_dir,
                          const std::string& resume_from_checkpoint, bool do_train);

// Whether this process is a restart of an elastic job: TORCHELASTIC_RESTART_COUNT (torchrun's group restarts
// so far) and CORETRAIN_RDZV_ROUND (`coretrain run`'s rendezvous round; > 0 after a failure or a scale-up).
struct ElasticRestart {
  int64_t restart_count = 0;
  int64_t rdzv_round = 0;
  bool under_agent = false;  // either variable is set (even to 0): an agent may restart this job
  bool restarted() const { return restart_count > 0 || rdzv_round > 0; }
  // "TORCHELASTIC_RESTART_COUNT=1, CORETRAIN_RDZV_ROUND=2" (the variables that are > 0).
  std::string describe() const;
};
// From the environment; an unset or empty variable is 0, anything but a non-negative integer is an error
// naming the variable.
ElasticRestart elastic_restart_from_env();

struct ResumeDecision {
  std::string checkpoint;  // the folder to resume from, or ""
  std::string why;         // one line for the log ("" when there is nothing to say)
  bool warning = false;    // `why` is a warning
};
// decide_resume, plus the elastic rule: on a restart an elastic job must not throw its work away, so the last
// complete checkpoint-N in output_dir is resumed even with --overwrite_output_dir (that flag is for the job's
// first start), and an output_dir without checkpoints (non-empty or not) starts from scratch instead of being
// refused. An explicit --resume_from_checkpoint still wins. A first start under an agent with
// --overwrite_output_dir over old checkpoints warns: a restart would take the newest of them.
ResumeDecision decide_resume(const std::string& output_dir, bool overwrite_output_dir,
                             const std::string& resume_from_checkpoint, bool do_train,
                             const ElasticRestart& restart);

// A checkpoint being written: files go into temp_dir(); commit() makes it checkpoint-N in one rename.
class CheckpointWriter {
 public:
  CheckpointWriter(const std::string& output_dir, int64_t step);
  ~CheckpointWriter();  // removes the temp folder when commit() was not reached
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  const std::string& temp_dir() const { return temp_; }
  const std::string& final_dir() const { return final_; }
  std::string path(const std::string& file) const { return temp_ + "/" + file; }
  void commit();

 private:
  std::string temp_, final_;
  bool committed_ = false;
};

struct OptimizerState {
  std::string optim;              // adamw_torch | sgd ...
  int64_t step = 0;               // updates done
  std::vector<float> exp_avg;     // adamw; sgd: momentum buffer
  std::vector<float> exp_avg_sq;  // adamw only
};

void save_optimizer_state(const std::string& path, const OptimizerState& state);
// Throws naming the file when it is malformed, not ours, or holds another model's size (num_params).
OptimizerState load_optimizer_state(const std::string& path, int64_t num_params);

// JSON files: written atomically with a trailing newline; read with the path named in every error. Non-finite
// floats as Python's json writes and reads them (Infinity, NaN; train/python_json.h).
void write_json(const std::string& path, const nlohmann::json& j, int indent = 2);
nlohmann::json read_json(const std::string& path);

}  // namespace ct::train

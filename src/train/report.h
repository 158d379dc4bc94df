// The training report: one self-contained HTML page (no scripts, fonts or links outside it; the plots are
// inline SVG drawn here) built from what a run leaves in output_dir:
//   trainer_state.json  log_history: loss, learning_rate, grad_norm per logging step, eval entries (required)
//   training_args.json  per-device batch, accumulation, epochs (optional)
//   all_results.json    train_runtime, train_samples_per_second, final eval EM/F1 (optional)
//   ddp_timing.json     written by coretrain qa at the end of training (optional):
//       {"world_size", "global_batch", "start_step", "steps", "buckets",
//        "log_times": [[step, seconds since training started], ...]   (rank 0, one per logging step),
//        "ranks": [{"rank", "node", "runtime_s", "compute_s", "comm_exposed_s", "eval_save_s", "optimizer_s",
//                   "updated_params"}, ...]}
//     comm_exposed_s: gradient all-reduce time backward did not hide (waited for in DdpReducer::finish);
//     eval_save_s: evaluation and checkpoints inside the training loop; compute_s: the rest of the runtime;
//     optimizer_s (inside compute_s): gradient norm, clipping and the update; updated_params: the parameters
//     this rank updates (all of them, or its slice when the node's ranks share the optimizer state).
//
// Plots: training loss, learning rate, gradient norm, eval metrics over steps, throughput (samples/s) per
// logging interval, per-rank compute vs exposed communication (stacked bars). Each line plot's polyline
// carries data-series="<name>" and one point per logged value.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ct::train {

inline constexpr const char* kTimingFile = "ddp_timing.json";
inline constexpr const char* kReportFile = "training_report.html";

// The page for `output_dir`; throws ct::Error when it has no trainer_state.json.
std::string training_report_html(const std::string& output_dir);
// Writes output_dir/training_report.html (atomically) and returns its path.
std::string write_training_report(const std::string& output_dir);

}  // namespace ct::train

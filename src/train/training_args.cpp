#include "train/training_args.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/fs.h"
#include "train/arg_parser.h"

namespace ct::train {
namespace {

void check(bool ok, const std::string& flag, const std::string& what) {
  if (!ok) fail("--", flag, ": ", what);
}

int64_t resolve_steps(double v, int64_t max_steps) {
  if (v < 1) return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(v * static_cast<double>(max_steps))));
  return static_cast<int64_t>(v);
}

}  // namespace

void add_model_args(ArgParser& p, ModelArguments& m) {
  // ModelArguments
  p.add("model_name_or_path", &m.model_name_or_path,
        "folder with config.json, model.safetensors and vocab, or a Hub repo id (org/name; docs/hub.md)");
  p.add("config_name", &m.config_name,
        "config.json (or its folder, or a Hub repo id) when not the model's; alone: random init");
  p.add("tokenizer_name", &m.tokenizer_name, "tokenizer folder or Hub repo id when not the model's");
  p.add("cache_dir", &m.cache_dir,
        "Hub cache for repo ids (default: HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub)");
  p.add("model_revision", &m.model_revision, "branch, tag or commit hash of the Hub repos");
  p.add("token", &m.token, "Hub token for gated/private repos (default: HF_TOKEN, else $HF_HOME/token)");
  p.add("trust_remote_code", &m.trust_remote_code, "accepted for compatibility");
}

void add_training_args(ArgParser& p, TrainingArguments& t) {
  // TrainingArguments
  p.add("output_dir", &t.output_dir, "where the model, checkpoints and results go (required)");
  p.add("overwrite_output_dir", &t.overwrite_output_dir, "train into a non-empty output_dir from scratch");
  p.add("do_train", &t.do_train, "train");
  p.add("do_eval", &t.do_eval, "evaluate on --validation_file");
  p.add("do_predict", &t.do_predict, "predict on --test_file");
  p.add("eval_strategy", &t.eval_strategy, "when to evaluate during training", {"no", "steps", "epoch"});
  p.add_alias("evaluation_strategy", "eval_strategy", "--evaluation_strategy: old name of --eval_strategy");
  p.add("per_device_train_batch_size", &t.per_device_train_batch_size,
        "features per process per micro-batch");
  p.add("per_device_eval_batch_size", &t.per_device_eval_batch_size, "features per process per eval batch");
  p.add("gradient_accumulation_steps", &t.gradient_accumulation_steps, "micro-batches per optimizer step");
  p.add("learning_rate", &t.learning_rate, "peak learning rate");
  p.add("weight_decay", &t.weight_decay, "AdamW decoupled weight decay (not on biases and LayerNorm)");
  p.add("adam_beta1", &t.adam_beta1, "AdamW beta1");
  p.add("adam_beta2", &t.adam_beta2, "AdamW beta2");
  p.add("adam_epsilon", &t.adam_epsilon, "AdamW epsilon");
  p.add("max_grad_norm", &t.max_grad_norm, "clip the global gradient norm to this (0: no clipping)");
  p.add("num_train_epochs", &t.num_train_epochs, "epochs (may be fractional)");
  p.add("max_steps", &t.max_steps, "optimizer steps; > 0 overrides num_train_epochs");
  p.add("lr_scheduler_type", &t.lr_scheduler_type, "learning rate schedule",
        {"linear", "cosine", "constant", "constant_with_warmup"});
  p.add("warmup_ratio", &t.warmup_ratio, "fraction of the steps spent warming up");
  p.add("warmup_steps", &t.warmup_steps, "warm-up steps (overrides warmup_ratio)");
  p.add("log_level", &t.log_level, "log level", {"passive", "debug", "info", "warning", "error", "critical"});
  p.add("logging_dir", &t.logging_dir,
        "TensorBoard event folder (default: output_dir/runs/{%b%d_%H-%M-%S}_{hostname}, as HF v4)");
  p.add("logging_strategy", &t.logging_strategy, "when to log", {"no", "steps", "epoch"});
  p.add("logging_first_step", &t.logging_first_step, "log the first step too");
  p.add("logging_steps", &t.logging_steps, "log every N steps (< 1: ratio of total steps)");
  p.add("logging_nan_inf_filter", &t.logging_nan_inf_filter, "skip nan/inf losses in the logged mean");
  p.add("save_strategy", &t.save_strategy, "when to write checkpoints", {"no", "steps", "epoch"});
  p.add("save_steps", &t.save_steps, "checkpoint every N steps (< 1: ratio of total steps)");
  p.add("save_total_limit", &t.save_total_limit, "keep at most this many checkpoints");
  p.add("save_only_model", &t.save_only_model, "checkpoints without optimizer/scheduler/rng (cannot resume)");
  p.add("save_safetensors", &t.save_safetensors, "accepted; weights are always safetensors");
  p.add("use_cpu", &t.use_cpu, "accepted: CPU is all coretrain uses");
  p.add_alias("no_cuda", "use_cpu", "--no_cuda: accepted (old name of --use_cpu); coretrain runs on CPU");
  p.add("seed", &t.seed, "seed for initialization, dropout and data order");
  p.add("data_seed", &t.data_seed, "seed for data order (default: seed)");
  p.add("full_determinism", &t.full_determinism, "accepted: coretrain is deterministic anyway");
  p.add("bf16", &t.bf16, "bf16 matmuls (autocast-style), f32 master weights");
  p.add("bf16_full_eval", &t.bf16_full_eval, "evaluate and predict in bf16 after training (norms stay f32)");
  p.add("eval_steps", &t.eval_steps, "evaluate every N steps (default: logging_steps)");
  p.add("dataloader_drop_last", &t.dataloader_drop_last, "drop the last incomplete batch");
  p.add("dataloader_num_workers", &t.dataloader_num_workers, "accepted for compatibility");
  p.add("group_by_length", &t.group_by_length,
        "shuffle in megabatches sorted by feature length (HF's LengthGroupedSampler): less padding");
  p.add("length_column_name", &t.length_column_name,
        "accepted: run_qa's features have no such column, so HF measures input_ids instead");
  p.add("run_name", &t.run_name, "a name for the run");
  p.add("disable_tqdm", &t.disable_tqdm, "no progress bar");
  p.add("load_best_model_at_end", &t.load_best_model_at_end, "not supported");
  p.add("metric_for_best_model", &t.metric_for_best_model, "not supported");
  p.add("ignore_data_skip", &t.ignore_data_skip, "on resume, do not skip the batches already seen");
  p.add("resume_from_checkpoint", &t.resume_from_checkpoint, "a checkpoint folder, or true for the latest");
  p.add("optim", &t.optim, "optimizer", {"adamw_torch", "adamw_hf", "adamw_torch_fused", "sgd"});
  p.add("report_to", &t.report_to,
        "none, tensorboard, or all (= tensorboard, the one integration coretrain has); comma-separated list");
  p.add("ddp_backend", &t.ddp_backend, "collective backend across processes", {"ccl", "mpi", "gloo"});
  p.add_alias("xpu_backend", "ddp_backend", "--xpu_backend: old name of --ddp_backend");
  p.add("ddp_timeout", &t.ddp_timeout, "seconds a collective may wait (CORETRAIN_COMM_TIMEOUT overrides)");
  p.add("ddp_bucket_cap_mb", &t.ddp_bucket_cap_mb, "gradient bucket size in MiB (default 25)");
  p.add("ddp_find_unused_parameters", &t.ddp_find_unused_parameters,
        "accepted: buckets of parameters without a gradient are reduced at the end of backward anyway");
  p.add("ddp_broadcast_buffers", &t.ddp_broadcast_buffers, "accepted: BERT has no buffers to broadcast");
  p.add("use_ipex", &t.use_ipex, "accepted: coretrain's own kernels play IPEX's part");
  p.add("local_rank", &t.local_rank, "set by old launchers; the environment is read instead");
  p.add("push_to_hub", &t.push_to_hub, "not supported");
}

void validate_training_args(TrainingArguments& t, std::vector<std::string>* notes) {
  if (!t.ddp_backend.empty() && t.ddp_backend != "ccl" && t.ddp_backend != "mpi" && t.ddp_backend != "gloo")
    check(false, "ddp_backend", "expected ccl|mpi|gloo, got '" + t.ddp_backend + "'");
  check(t.per_device_train_batch_size > 0, "per_device_train_batch_size",
        ct::str("must be > 0, got ", t.per_device_train_batch_size));
  check(t.per_device_eval_batch_size > 0, "per_device_eval_batch_size",
        ct::str("must be > 0, got ", t.per_device_eval_batch_size));
  check(t.gradient_accumulation_steps > 0, "gradient_accumulation_steps",
        ct::str("must be > 0, got ", t.gradient_accumulation_steps));
  check(t.learning_rate >= 0, "learning_rate", ct::str("must be >= 0, got ", t.learning_rate));
  check(t.weight_decay >= 0, "weight_decay", ct::str("must be >= 0, got ", t.weight_decay));
  check(t.adam_beta1 >= 0 && t.adam_beta1 < 1, "adam_beta1",
        ct::str("must be in [0, 1), got ", t.adam_beta1));
  check(t.adam_beta2 >= 0 && t.adam_beta2 < 1, "adam_beta2",
        ct::str("must be in [0, 1), got ", t.adam_beta2));
  check(t.adam_epsilon >= 0, "adam_epsilon", ct::str("must be >= 0, got ", t.adam_epsilon));
  check(t.max_grad_norm >= 0, "max_grad_norm",
        ct::str("must be >= 0 (0 disables clipping), got ", t.max_grad_norm));
  check(t.num_train_epochs >= 0, "num_train_epochs", ct::str("must be >= 0, got ", t.num_train_epochs));
  check(t.max_steps == -1 || t.max_steps > 0, "max_steps", ct::str("must be > 0 (or -1), got ", t.max_steps));
  check(t.warmup_ratio >= 0 && t.warmup_ratio <= 1, "warmup_ratio",
        ct::str("must be in [0, 1], got ", t.warmup_ratio));
  check(t.warmup_steps >= 0, "warmup_steps", ct::str("must be >= 0, got ", t.warmup_steps));
  check(t.logging_steps > 0, "logging_steps", ct::str("must be > 0, got ", t.logging_steps));
  check(t.save_steps > 0, "save_steps", ct::str("must be > 0, got ", t.save_steps));
  check(t.eval_steps == -1 || t.eval_steps > 0, "eval_steps", ct::str("must be > 0, got ", t.eval_steps));
  for (auto [name, v] : {std::pair{"logging_steps", t.logging_steps}, std::pair{"save_steps", t.save_steps},
                         std::pair{"eval_steps", t.eval_steps}})
    check(v < 1 || v == std::floor(v), name, ct::str("must be an integer or a ratio < 1, got ", v));
  check(t.save_total_limit == -1 || t.save_total_limit > 0, "save_total_limit",
        ct::str("must be > 0, got ", t.save_total_limit));
  check(t.seed >= 0, "seed", ct::str("must be >= 0, got ", t.seed));
  check(t.data_seed >= -1, "data_seed", ct::str("must be >= 0, got ", t.data_seed));
  check(t.ddp_timeout > 0, "ddp_timeout", ct::str("must be > 0, got ", t.ddp_timeout));
  check(t.ddp_bucket_cap_mb > 0, "ddp_bucket_cap_mb", ct::str("must be > 0, got ", t.ddp_bucket_cap_mb));
  check(!t.load_best_model_at_end, "load_best_model_at_end", "not supported by coretrain");
  check(!t.push_to_hub, "push_to_hub", "not supported by coretrain (nothing leaves the machine)");
  report_integrations(t);                         // throws on a name coretrain cannot report to
  if (t.eval_strategy != "no") t.do_eval = true;  // as HF's __post_init__
  if (t.use_ipex) notes->push_back("--use_ipex: accepted; coretrain's own bf16/f32 kernels play IPEX's part");
}

int64_t TrainingArguments::resolved_logging_steps(int64_t total) const {
  return resolve_steps(logging_steps, total);
}
int64_t TrainingArguments::resolved_save_steps(int64_t total) const {
  return resolve_steps(save_steps, total);
}
int64_t TrainingArguments::resolved_eval_steps(int64_t total) const {
  return resolve_steps(eval_steps > 0 ? eval_steps : logging_steps, total);
}

nlohmann::json training_args_to_json(const TrainingArguments& t) {
  auto opt_int = [](int64_t v) { return v < 0 ? nlohmann::json() : nlohmann::json(v); };
  auto opt_str = [](const std::string& v) { return v.empty() ? nlohmann::json() : nlohmann::json(v); };
  nlohmann::json j;
  j["output_dir"] = t.output_dir;
  j["overwrite_output_dir"] = t.overwrite_output_dir;
  j["do_train"] = t.do_train;
  j["do_eval"] = t.do_eval;
  j["do_predict"] = t.do_predict;
  j["eval_strategy"] = t.eval_strategy;
  j["per_device_train_batch_size"] = t.per_device_train_batch_size;
  j["per_device_eval_batch_size"] = t.per_device_eval_batch_size;
  j["gradient_accumulation_steps"] = t.gradient_accumulation_steps;
  j["learning_rate"] = t.learning_rate;
  j["weight_decay"] = t.weight_decay;
  j["adam_beta1"] = t.adam_beta1;
  j["adam_beta2"] = t.adam_beta2;
  j["adam_epsilon"] = t.adam_epsilon;
  j["max_grad_norm"] = t.max_grad_norm;
  j["num_train_epochs"] = t.num_train_epochs;
  j["max_steps"] = t.max_steps;
  j["lr_scheduler_type"] = t.lr_scheduler_type;
  j["warmup_ratio"] = t.warmup_ratio;
  j["warmup_steps"] = t.warmup_steps;
  j["log_level"] = t.log_level;
  j["logging_dir"] = opt_str(t.logging_dir);
  j["logging_strategy"] = t.logging_strategy;
  j["logging_first_step"] = t.logging_first_step;
  j["logging_steps"] = t.logging_steps;
  j["logging_nan_inf_filter"] = t.logging_nan_inf_filter;
  j["save_strategy"] = t.save_strategy;
  j["save_steps"] = t.save_steps;
  j["save_total_limit"] = opt_int(t.save_total_limit);
  j["save_only_model"] = t.save_only_model;
  j["save_safetensors"] = t.save_safetensors;
  j["use_cpu"] = t.use_cpu;
  j["seed"] = t.seed;
  j["data_seed"] = opt_int(t.data_seed);
  j["full_determinism"] = t.full_determinism;
  j["bf16"] = t.bf16;
  j["bf16_full_eval"] = t.bf16_full_eval;
  j["eval_steps"] = t.eval_steps < 0 ? nlohmann::json() : nlohmann::json(t.eval_steps);
  j["dataloader_drop_last"] = t.dataloader_drop_last;
  j["dataloader_num_workers"] = t.dataloader_num_workers;
  j["group_by_length"] = t.group_by_length;
  j["length_column_name"] = t.length_column_name;
  j["run_name"] = t.run_name.empty() ? t.output_dir : t.run_name;
  j["disable_tqdm"] = t.disable_tqdm;
  j["load_best_model_at_end"] = t.load_best_model_at_end;
  j["metric_for_best_model"] = opt_str(t.metric_for_best_model);
  j["ignore_data_skip"] = t.ignore_data_skip;
  j["resume_from_checkpoint"] = opt_str(t.resume_from_checkpoint);
  j["optim"] = t.optim;
  j["report_to"] = report_integrations(t);
  j["ddp_backend"] = opt_str(t.ddp_backend);
  j["ddp_timeout"] = t.ddp_timeout;
  j["ddp_bucket_cap_mb"] = t.ddp_bucket_cap_mb > 0 ? nlohmann::json(t.ddp_bucket_cap_mb) : nlohmann::json();
  j["ddp_find_unused_parameters"] = t.ddp_find_unused_parameters;
  j["ddp_broadcast_buffers"] = t.ddp_broadcast_buffers;
  j["use_ipex"] = t.use_ipex;
  j["local_rank"] = t.local_rank;
  j["push_to_hub"] = t.push_to_hub;
  return j;
}

std::vector<std::string> report_integrations(const TrainingArguments& t) {
  // HF's integrations (transformers/integrations/integration_utils.py): naming one whose package is missing
  // fails there too, so coretrain refuses them instead of training without the report that was asked for.
  static const char* hf_only[] = {"azure_ml", "clearml", "codecarbon", "comet_ml", "dagshub", "dvclive",
                                  "flyte",    "mlflow",  "neptune",    "swanlab",  "trackio", "wandb"};
  std::vector<std::string> out;
  std::string name;
  auto take = [&] {
    if (name.empty() || name == "none") return name.clear();
    if (name == "all" || name == "tensorboard") {
      if (std::find(out.begin(), out.end(), "tensorboard") == out.end()) out.push_back("tensorboard");
      return name.clear();
    }
    for (const char* h : hf_only)
      if (name == h)
        fail("--report_to: ", name,
             " is not available in coretrain (it writes TensorBoard event files only): ",
             "use tensorboard, all or none");
    fail("--report_to: unknown integration '", name, "' (coretrain reports to tensorboard; all; none)");
  };
  for (char ch : t.report_to) {
    if (ch == ',' || ch == ' ' || ch == '[' || ch == ']' || ch == '"' || ch == '\'')
      take();
    else
      name += ch;
  }
  take();
  return out;
}

}  // namespace ct::train

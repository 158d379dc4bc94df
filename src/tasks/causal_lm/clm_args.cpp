#include "tasks/causal_lm/clm_args.h"

#include "core/error.h"
#include "tasks/causal_lm/clm_demo.h"

namespace ct::tasks {
namespace {

void add_flags(train::ArgParser& p, ClmArguments& a) {
  auto& m = a.model_extra;
  auto& d = a.data;
  p.add("model_type", &m.model_type, "train from scratch: a fresh model of this type (llama)");
  p.add("config_overrides", &m.config_overrides,
        "from scratch: config fields to override, \"hidden_size=64,num_hidden_layers=2\"");
  p.add("use_fast_tokenizer", &m.use_fast_tokenizer, "accepted: coretrain's tokenizers are the fast ones");
  p.add("dtype", &m.dtype, "the parameters' dtype: auto, float32 (bfloat16, float16: not in this version)",
        {"auto", "bfloat16", "float16", "float32"});
  p.add_alias("torch_dtype", "dtype", "--torch_dtype: old name of --dtype");
  p.add("dataset_name", &d.dataset_name, "a dataset on the Hub (repo id or a legacy name such as wikitext)");
  p.add("dataset_config_name", &d.dataset_config_name, "the dataset's configuration");
  p.add("train_file", &d.train_file, "txt, csv or json file with the training texts");
  p.add("validation_file", &d.validation_file, "txt, csv or json file with the evaluation texts");
  p.add("max_train_samples", &d.max_train_samples, "truncate the training blocks");
  p.add("max_eval_samples", &d.max_eval_samples, "truncate the evaluation blocks");
  p.add("streaming", &d.streaming, "not supported: datasets are read whole");
  p.add("block_size", &d.block_size,
        "tokens per block (default: the tokenizer's model_max_length, min(1024, max positions) when longer)");
  p.add("overwrite_cache", &d.overwrite_cache, "rebuild the cached features");
  p.add("validation_split_percentage", &d.validation_split_percentage,
        "percent of train held out for evaluation when there is no validation split");
  p.add("preprocessing_num_workers", &d.preprocessing_num_workers, "accepted for compatibility");
  p.add("keep_linebreaks", &d.keep_linebreaks, "txt files: keep each line's line break");
  p.add("gradient_checkpointing", &d.gradient_checkpointing,
        "recompute each layer in backward (keeps one layer's activations; the same results)");
}

void validate(ClmArguments& a) {
  auto& d = a.data;
  validate_common(a.model, a.training, true, &a.notes);
  CT_CHECK(!d.streaming, "--streaming: not supported by coretrain (it reads the dataset's files whole)");
  CT_CHECK(!a.training.bf16,
           "--bf16: the decoder body is f32-only in this version (run without it: it trains in float32)");
  CT_CHECK(!a.training.bf16_full_eval, "--bf16_full_eval: the decoder body is f32-only in this version");
  const std::string& dt = a.model_extra.dtype;
  CT_CHECK(dt != "bfloat16" && dt != "float16", "--dtype ", dt,
           ": the decoder body is f32-only in this version (use float32 or auto)");
  CT_CHECK(!d.dataset_name.empty() || !d.train_file.empty() || !d.validation_file.empty(),
           "Need either a dataset name (--dataset_name) or a training/validation file (--train_file, "
           "--validation_file)");
  if (!d.train_file.empty()) check_extension("train_file", d.train_file, {"csv", "json", "txt"});
  if (!d.validation_file.empty())
    check_extension("validation_file", d.validation_file, {"csv", "json", "txt"});
  CT_CHECK(a.model_extra.config_overrides.empty() ||
               (a.model.config_name.empty() && a.model.model_name_or_path.empty()),
           "--config_overrides can't be used in combination with --config_name or --model_name_or_path");
  CT_CHECK(!a.model.model_name_or_path.empty() || !a.model.config_name.empty() ||
               !a.model_extra.model_type.empty(),
           "--model_type: required to train from scratch (no --model_name_or_path or --config_name given)");
  CT_CHECK(d.validation_split_percentage >= 0 && d.validation_split_percentage < 100,
           "--validation_split_percentage: expected 0..99, got ", d.validation_split_percentage);
  CT_CHECK(d.block_size == -1 || d.block_size > 1, "--block_size: must be > 1, got ", d.block_size);
  check_max_samples({{"max_train_samples", d.max_train_samples}, {"max_eval_samples", d.max_eval_samples}});
}

}  // namespace

ClmArguments parse_clm_args(const std::vector<std::string>& argv) {
  return parse_script_args<ClmDataArguments>("clm", argv, add_flags, validate, &clm_demo());
}

std::string clm_args_help() {
  return script_args_help<ClmDataArguments>("clm", "run_clm.py", add_flags, true);
}

}  // namespace ct::tasks

#include "tasks/masked_lm/mlm_args.h"
#include "tasks/masked_lm/mlm_demo.h"

#include "core/error.h"

namespace ct::tasks {
namespace {

void add_flags(train::ArgParser& p, MlmArguments& a) {
  auto& m = a.model_extra;
  auto& d = a.data;
  p.add("model_type", &m.model_type, "train from scratch: a fresh model of this type (bert, roberta, ...)");
  p.add("config_overrides", &m.config_overrides, "from scratch: config fields to override, \"a=1,b=0.2\"");
  p.add("use_fast_tokenizer", &m.use_fast_tokenizer, "accepted: coretrain's tokenizers are the fast ones");
  p.add("dataset_name", &d.dataset_name, "a dataset on the Hub (repo id or a legacy name such as wikitext)");
  p.add("dataset_config_name", &d.dataset_config_name, "the dataset's configuration");
  p.add("train_file", &d.train_file, "txt, csv or json file with the training texts");
  p.add("validation_file", &d.validation_file, "txt, csv or json file with the evaluation texts");
  p.add("overwrite_cache", &d.overwrite_cache, "rebuild the cached features");
  p.add("validation_split_percentage", &d.validation_split_percentage,
        "percent of train held out for evaluation when there is no validation split");
  p.add("max_seq_length", &d.max_seq_length,
        "tokens per chunk (default: the tokenizer's model_max_length, at most 1024)");
  p.add("preprocessing_num_workers", &d.preprocessing_num_workers, "accepted for compatibility");
  p.add("mlm_probability", &d.mlm_probability, "fraction of tokens masked for the loss");
  p.add("line_by_line", &d.line_by_line, "one example per non-empty line instead of concatenated chunks");
  p.add("pad_to_max_length", &d.pad_to_max_length, "line by line: pad every line to max_seq_length");
  p.add("max_train_samples", &d.max_train_samples, "truncate the training examples");
  p.add("max_eval_samples", &d.max_eval_samples, "truncate the evaluation examples");
  p.add("streaming", &d.streaming, "not supported: datasets are read whole");
}

void validate(MlmArguments& a) {
  auto& d = a.data;
  validate_common(a.model, a.training, true, &a.notes);
  CT_CHECK(!d.streaming, "--streaming: not supported by coretrain (it reads the dataset's files whole)");
  CT_CHECK(!d.dataset_name.empty() || !d.train_file.empty() || !d.validation_file.empty(),
           "need either a dataset name (--dataset_name) or a training/validation file (--train_file, "
           "--validation_file)");
  if (!d.train_file.empty()) check_extension("train_file", d.train_file, {"csv", "json", "txt"});
  if (!d.validation_file.empty())
    check_extension("validation_file", d.validation_file, {"csv", "json", "txt"});
  CT_CHECK(!a.model.model_name_or_path.empty() || !a.model.config_name.empty() ||
               !a.model_extra.model_type.empty(),
           "--model_name_or_path: required, or --config_name / --model_type to train from scratch");
  CT_CHECK(a.model_extra.config_overrides.empty() ||
               (a.model.config_name.empty() && a.model.model_name_or_path.empty()),
           "--config_overrides can't be used in combination with --config_name or --model_name_or_path");
  CT_CHECK(d.mlm_probability >= 0 && d.mlm_probability <= 1,
           "--mlm_probability: expected a probability in [0, 1], got ", d.mlm_probability);
  CT_CHECK(d.validation_split_percentage >= 0 && d.validation_split_percentage < 100,
           "--validation_split_percentage: expected 0..99, got ", d.validation_split_percentage);
  CT_CHECK(d.max_seq_length == -1 || d.max_seq_length > 0, "--max_seq_length: must be > 0, got ",
           d.max_seq_length);
  check_max_samples({{"max_train_samples", d.max_train_samples}, {"max_eval_samples", d.max_eval_samples}});
}

}  // namespace

MlmArguments parse_mlm_args(const std::vector<std::string>& argv) {
  return parse_script_args<MlmDataArguments>("mlm", argv, add_flags, validate, &mlm_demo());
}

std::string mlm_args_help() {
  return script_args_help<MlmDataArguments>("mlm", "run_mlm.py", add_flags, true);
}

}  // namespace ct::tasks

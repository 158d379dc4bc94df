#include "tasks/multiple_choice/swag_args.h"
#include "tasks/multiple_choice/swag_demo.h"

#include "core/error.h"

namespace ct::tasks {
namespace {

void add_flags(train::ArgParser& p, SwagArguments& a) {
  auto& d = a.data;
  p.add("use_fast_tokenizer", &a.model_extra.use_fast_tokenizer,
        "accepted: coretrain's tokenizers are the fast ones");
  p.add("train_file", &d.train_file, "csv or json file with the training data (default: the Hub's swag)");
  p.add("validation_file", &d.validation_file, "csv or json file with the evaluation data");
  p.add("overwrite_cache", &d.overwrite_cache, "rebuild the cached features");
  p.add("preprocessing_num_workers", &d.preprocessing_num_workers, "accepted for compatibility");
  p.add("max_seq_length", &d.max_seq_length,
        "tokens per choice after tokenization (default: the tokenizer's model_max_length)");
  p.add("pad_to_max_length", &d.pad_to_max_length,
        "pad every choice to max_seq_length (false: pad each batch to its longest)");
  p.add("max_train_samples", &d.max_train_samples, "truncate the training examples");
  p.add("max_eval_samples", &d.max_eval_samples, "truncate the evaluation examples");
}

void validate(SwagArguments& a) {
  auto& d = a.data;
  validate_common(a.model, a.training, a.demo, &a.notes);
  if (!d.train_file.empty()) check_extension("train_file", d.train_file, {"csv", "json"});
  if (!d.validation_file.empty()) check_extension("validation_file", d.validation_file, {"csv", "json"});
  CT_CHECK(d.max_seq_length == -1 || d.max_seq_length > 0, "--max_seq_length: must be > 0, got ",
           d.max_seq_length);
  check_max_samples({{"max_train_samples", d.max_train_samples}, {"max_eval_samples", d.max_eval_samples}});
}

}  // namespace

SwagArguments parse_swag_args(const std::vector<std::string>& argv) {
  return parse_script_args<SwagDataArguments>("swag", argv, add_flags, validate, &swag_demo());
}

std::string swag_args_help() {
  return script_args_help<SwagDataArguments>("swag", "run_swag.py", add_flags, true);
}

}  // namespace ct::tasks

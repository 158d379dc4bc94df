#include "tasks/sequence_classification/glue_args.h"

#include <cctype>

#include "core/error.h"
#include "tasks/metrics/glue_metric.h"
#include "tasks/sequence_classification/sequence_demo.h"

namespace ct::tasks {
namespace {

void add_flags(train::ArgParser& p, GlueArguments& a) {
  auto& m = a.model_extra;
  auto& d = a.data;
  p.add("use_fast_tokenizer", &m.use_fast_tokenizer, "accepted: coretrain's tokenizers are the fast ones");
  p.add("ignore_mismatched_sizes", &m.ignore_mismatched_sizes,
        "load a checkpoint whose head has another number of labels (the head starts fresh)");
  p.add("task_name", &d.task_name, "GLUE task: " + glue_task_list());
  p.add("dataset_name", &d.dataset_name,
        "a dataset on the Hub (repo id) instead of a GLUE task or local files");
  p.add("dataset_config_name", &d.dataset_config_name, "the dataset's configuration");
  p.add("max_seq_length", &d.max_seq_length,
        "tokens per example after tokenization (longer ones are truncated)");
  p.add("overwrite_cache", &d.overwrite_cache, "rebuild the cached features");
  p.add("pad_to_max_length", &d.pad_to_max_length,
        "pad every example to max_seq_length (false: pad each batch to its longest)");
  p.add("max_train_samples", &d.max_train_samples, "truncate the training examples");
  p.add("max_eval_samples", &d.max_eval_samples, "truncate the evaluation examples");
  p.add("max_predict_samples", &d.max_predict_samples, "truncate the prediction examples");
  p.add("train_file", &d.train_file, "csv or json file with the training data");
  p.add("validation_file", &d.validation_file, "csv or json file with the validation data");
  p.add("test_file", &d.test_file, "csv or json file with the test data");
}

void validate(GlueArguments& a) {
  auto& d = a.data;
  validate_common(a.model, a.training, a.demo, &a.notes);
  for (char& c : d.task_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!d.task_name.empty()) {
    CT_CHECK(is_glue_task(d.task_name), "--task_name ", d.task_name, ": unknown task, pick one of ",
             glue_task_list());
  } else if (d.dataset_name.empty()) {
    check_train_validation_pair(
        d.train_file, d.validation_file,
        "need either a GLUE task (--task_name), a training/validation file (--train_file and "
        "--validation_file) or a dataset name (--dataset_name)");
  }
  CT_CHECK(d.max_seq_length > 0, "--max_seq_length: must be > 0, got ", d.max_seq_length);
  check_max_samples({{"max_train_samples", d.max_train_samples},
                     {"max_eval_samples", d.max_eval_samples},
                     {"max_predict_samples", d.max_predict_samples}});
}

}  // namespace

GlueArguments parse_glue_args(const std::vector<std::string>& argv) {
  return parse_script_args<GlueDataArguments>("glue", argv, add_flags, validate, &glue_demo());
}

std::string glue_args_help() {
  return script_args_help<GlueDataArguments>("glue", "run_glue.py", add_flags, true);
}

}  // namespace ct::tasks

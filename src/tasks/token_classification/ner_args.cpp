#include "tasks/token_classification/ner_args.h"
#include "tasks/token_classification/ner_demo.h"

#include <cctype>

#include "core/error.h"

namespace ct::tasks {
namespace {

void add_flags(train::ArgParser& p, NerArguments& a) {
  auto& d = a.data;
  p.add("ignore_mismatched_sizes", &a.model_extra.ignore_mismatched_sizes,
        "load a checkpoint whose head has another number of labels (the head starts fresh)");
  p.add("task_name", &d.task_name, "ner, pos or chunk: which {task}_tags column holds the labels");
  p.add("dataset_name", &d.dataset_name, "a dataset on the Hub (repo id or a legacy name such as conll2003)");
  p.add("dataset_config_name", &d.dataset_config_name, "the dataset's configuration");
  p.add("train_file", &d.train_file, "csv or json file with the training data");
  p.add("validation_file", &d.validation_file, "csv or json file with the validation data");
  p.add("test_file", &d.test_file, "csv or json file with the test data");
  p.add("text_column_name", &d.text_column_name,
        "the column of word lists (default: tokens, else the first)");
  p.add("label_column_name", &d.label_column_name,
        "the column of label lists (default: {task_name}_tags, else the second)");
  p.add("overwrite_cache", &d.overwrite_cache, "rebuild the cached features");
  p.add("preprocessing_num_workers", &d.preprocessing_num_workers, "accepted for compatibility");
  p.add("max_seq_length", &d.max_seq_length,
        "tokens per example after tokenization (default: the tokenizer's model_max_length)");
  p.add("pad_to_max_length", &d.pad_to_max_length,
        "pad every example to max_seq_length (false: pad each batch to its longest)");
  p.add("max_train_samples", &d.max_train_samples, "truncate the training examples");
  p.add("max_eval_samples", &d.max_eval_samples, "truncate the evaluation examples");
  p.add("max_predict_samples", &d.max_predict_samples, "truncate the prediction examples");
  p.add("label_all_tokens", &d.label_all_tokens,
        "label every sub-token with its word's label (B- becomes I-) instead of -100");
  p.add("return_entity_level_metrics", &d.return_entity_level_metrics,
        "report each entity type's precision/recall/f1/number, not only the overall scores");
}

void validate(NerArguments& a) {
  auto& d = a.data;
  validate_common(a.model, a.training, a.demo, &a.notes);
  CT_CHECK(!d.dataset_name.empty() || !d.train_file.empty() || !d.validation_file.empty(),
           "need either a dataset name (--dataset_name) or a training/validation file (--train_file, "
           "--validation_file)");
  if (!d.train_file.empty()) check_extension("train_file", d.train_file, {"csv", "json"});
  if (!d.validation_file.empty()) check_extension("validation_file", d.validation_file, {"csv", "json"});
  for (char& c : d.task_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  CT_CHECK(d.max_seq_length == -1 || d.max_seq_length > 0, "--max_seq_length: must be > 0, got ",
           d.max_seq_length);
  check_max_samples({{"max_train_samples", d.max_train_samples},
                     {"max_eval_samples", d.max_eval_samples},
                     {"max_predict_samples", d.max_predict_samples}});
}

}  // namespace

NerArguments parse_ner_args(const std::vector<std::string>& argv) {
  return parse_script_args<NerDataArguments>("ner", argv, add_flags, validate, &ner_demo());
}

std::string ner_args_help() {
  return script_args_help<NerDataArguments>("ner", "run_ner.py", add_flags, true);
}

}  // namespace ct::tasks

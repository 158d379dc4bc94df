#include "tasks/sequence_classification/classification_args.h"
#include "tasks/sequence_classification/sequence_demo.h"

#include "core/error.h"

namespace ct::tasks {
namespace {

void add_flags(train::ArgParser& p, ClassificationArguments& a) {
  auto& m = a.model_extra;
  auto& d = a.data;
  p.add("use_fast_tokenizer", &m.use_fast_tokenizer, "accepted: coretrain's tokenizers are the fast ones");
  p.add("ignore_mismatched_sizes", &m.ignore_mismatched_sizes,
        "load a checkpoint whose head has another number of labels (the head starts fresh)");
  p.add("dataset_name", &d.dataset_name, "a dataset on the Hub (repo id)");
  p.add("dataset_config_name", &d.dataset_config_name, "the dataset's configuration");
  p.add("do_regression", &d.do_regression, "a regression (float labels); default: decided by the label type");
  p.add("text_column_names", &d.text_column_names,
        "comma-separated text columns, joined (default: sentence)");
  p.add("text_column_delimiter", &d.text_column_delimiter, "what joins the text columns");
  p.add("train_split_name", &d.train_split_name, "the dataset's split to train on (default: train)");
  p.add("validation_split_name", &d.validation_split_name, "the split to evaluate on (default: validation)");
  p.add("test_split_name", &d.test_split_name, "the split to predict on (default: test)");
  p.add("remove_splits", &d.remove_splits, "comma-separated splits to drop");
  p.add("remove_columns", &d.remove_columns, "comma-separated columns to drop");
  p.add("label_column_name", &d.label_column_name, "the label column (default: label)");
  p.add("max_seq_length", &d.max_seq_length,
        "tokens per example after tokenization (longer ones are truncated)");
  p.add("overwrite_cache", &d.overwrite_cache, "rebuild the cached features");
  p.add("pad_to_max_length", &d.pad_to_max_length,
        "pad every example to max_seq_length (false: pad each batch to its longest)");
  p.add("shuffle_train_dataset", &d.shuffle_train_dataset,
        "shuffle the training examples before truncating them");
  p.add("shuffle_seed", &d.shuffle_seed, "seed of that shuffle");
  p.add("max_train_samples", &d.max_train_samples, "truncate the training examples");
  p.add("max_eval_samples", &d.max_eval_samples, "truncate the evaluation examples");
  p.add("max_predict_samples", &d.max_predict_samples, "truncate the prediction examples");
  p.add("metric_name", &d.metric_name, "the metric to report (default: accuracy, f1 for multi-label, mse)");
  p.add("train_file", &d.train_file, "csv or json file with the training data");
  p.add("validation_file", &d.validation_file, "csv or json file with the validation data");
  p.add("test_file", &d.test_file, "csv or json file with the test data");
}

void validate(ClassificationArguments& a) {
  auto& d = a.data;
  validate_common(a.model, a.training, a.demo, &a.notes);
  if (d.dataset_name.empty()) {
    check_train_validation_pair(
        d.train_file, d.validation_file,
        "need either a training/validation file (--train_file and --validation_file) or a dataset name "
        "(--dataset_name)");
  }
  CT_CHECK(d.max_seq_length > 0, "--max_seq_length: must be > 0, got ", d.max_seq_length);
  // NumPy's SeedSequence refuses a negative seed.
  CT_CHECK(d.shuffle_seed >= 0, "--shuffle_seed: must be >= 0 (a NumPy seed), got ", d.shuffle_seed);
  check_max_samples({{"max_train_samples", d.max_train_samples},
                     {"max_eval_samples", d.max_eval_samples},
                     {"max_predict_samples", d.max_predict_samples}});
}

}  // namespace

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t at = 0;
  while (true) {
    const size_t comma = s.find(',', at);
    out.push_back(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

ClassificationArguments parse_classification_args(const std::vector<std::string>& argv) {
  return parse_script_args<ClassificationDataArguments>("classification", argv, add_flags, validate,
                                                        &classification_demo());
}

std::string classification_args_help() {
  return script_args_help<ClassificationDataArguments>("classification", "run_classification.py", add_flags,
                                                       true);
}

}  // namespace ct::tasks

#include "tasks/script_args.h"

#include "core/error.h"

namespace ct::tasks {

std::string file_extension(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

void check_extension(const std::string& flag, const std::string& path,
                     const std::vector<std::string>& extensions) {
  const std::string ext = file_extension(path);
  std::string all;
  for (const auto& e : extensions) {
    if (e == ext) return;
    all += (all.empty() ? "" : ", ") + e;
  }
  fail("--", flag, " ", path, ": expected a ", all, " file (by its extension)");
}

void check_train_validation_pair(const std::string& train_file, const std::string& validation_file,
                                 const std::string& need) {
  CT_CHECK(!train_file.empty() && !validation_file.empty(), need);
  check_extension("train_file", train_file, {"csv", "json"});
  CT_CHECK(file_extension(validation_file) == file_extension(train_file), "--validation_file ",
           validation_file, ": expected the same extension (csv or json) as --train_file ", train_file);
}

void check_max_samples(std::initializer_list<std::pair<const char*, int64_t>> flags) {
  for (auto [name, v] : flags) CT_CHECK(v == -1 || v > 0, "--", name, ": must be > 0, got ", v);
}

void validate_common(train::ModelArguments& model, train::TrainingArguments& training, bool from_scratch_ok,
                     std::vector<std::string>* notes) {
  if (training.output_dir.empty()) fail("--output_dir: required");
  if (!from_scratch_ok && model.model_name_or_path.empty())
    fail("--model_name_or_path: required (a folder with config.json and weights, or a Hub repo id)");
  train::validate_training_args(training, notes);
}

void add_debug_flags(train::ArgParser& p, std::string& dump_eval_features, std::string& dump_train_features) {
  p.add("dump_eval_features", &dump_eval_features,
        "coretrain debug: write each eval feature's model inputs and labels to FILE (JSON), for checking "
        "against another implementation");
  p.add("dump_train_features", &dump_train_features,
        "coretrain debug: write the first epoch's training features (this rank's batches in training order, "
        "MLM with that epoch's masks) to FILE, in --dump_eval_features' format");
}

void add_demo_flag(train::ArgParser& p, bool& demo) {
  p.add("demo", &demo,
        "coretrain: built-in demo (generated data with a learnable signal, a small BERT from random init, "
        "train + eval; any flag overrides a demo default)");
}

void apply_demo_training_defaults(train::TrainingArguments& t, const std::string& command) {
  t.output_dir = "demo-out-" + command;
  t.do_train = true;
  t.do_eval = true;
  // The demo's files go into output_dir before the run starts; a rerun regenerates them and starts over.
  t.overwrite_output_dir = true;
  t.save_strategy = "no";
  t.logging_steps = 50;
  t.warmup_ratio = 0.1;
  t.weight_decay = 0.01;
  t.per_device_train_batch_size = 32;  // a global batch: N ranks take 1/N of it each
  t.per_device_eval_batch_size = 64;
  t.learning_rate = 2e-3;
  t.num_train_epochs = 3;
}

std::string demo_folder(const train::TrainingArguments& t) {
  return t.output_dir + "/demo_data";
}

void use_demo_model(train::ModelArguments& m, const std::string& dir) {
  if (!m.model_name_or_path.empty()) return;
  if (m.config_name.empty()) m.config_name = dir;
  if (m.tokenizer_name.empty()) m.tokenizer_name = dir;
}

}  // namespace ct::tasks

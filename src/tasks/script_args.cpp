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

}  // namespace ct::tasks

#include "tasks/masked_lm/mlm_demo.h"

#include "core/fs.h"
#include "tasks/task_demo.h"

namespace ct::tasks {
namespace {

const std::vector<std::string> kRing = {"one",   "two",   "three", "four", "five",   "six",
                                        "seven", "eight", "nine",  "ten",  "eleven", "twelve"};

void mlm_files(MlmArguments& a, const std::string& dir) {
  auto& d = a.data;
  if (!d.dataset_name.empty() || !d.train_file.empty() || !d.validation_file.empty()) return;
  d.train_file = dir + "/train.txt";
  d.validation_file = dir + "/validation.txt";
}

void write_mlm(const MlmArguments& a, const std::string& dir) {
  create_demo_folder(dir);
  const int64_t ring = static_cast<int64_t>(kRing.size());
  for (uint64_t split = 0; split < 2; ++split) {
    DemoRng rng(static_cast<uint64_t>(a.training.seed), split);
    std::string text;
    for (int64_t i = 0, n = split ? kDemoEvalExamples : kDemoTrainExamples * 2; i < n; ++i) {
      std::vector<std::string> line;
      for (int64_t k = 0, start = rng.below(ring), len = rng.between(12, 30); k < len; ++k)
        line.push_back(kRing[static_cast<size_t>((start + k) % ring)]);
      text += join_words(line) + "\n";
    }
    fs::write_file_atomic(dir + (split ? "/validation.txt" : "/train.txt"), text);
  }
  write_demo_model(dir, {join_words(kRing)});
}

}  // namespace

const TaskDemo<MlmDataArguments>& mlm_demo() {
  static const TaskDemo<MlmDataArguments> d{"eval_accuracy",
                                            [](MlmArguments& a) {
                                              // Short chunks: fewer positions to tell apart, more chunks per
                                              // epoch.
                                              a.data.max_seq_length = 32;
                                              a.training.num_train_epochs = 6;
                                            },
                                            mlm_files, write_mlm};
  return d;
}

}  // namespace ct::tasks

// What the task commands' --demo generators share: a seeded word stream, the words they draw from, and the
// model folder every demo trains from (a whole-word WordPiece tokenizer of the generated texts and the small
// random-init BERT config of `coretrain qa --demo`). Each task's generator (tasks/*/..._demo.cpp) writes its
// data as the files its command reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "model/config.h"

namespace ct::tasks {

// Counter-based, so a seed gives the same data on every machine and at every world size.
class DemoRng {
 public:
  DemoRng(uint64_t seed, uint64_t split) : g_(seed * 1000003 + split) {}
  int64_t below(int64_t n) { return static_cast<int64_t>(g_.below(static_cast<uint64_t>(n))); }
  int64_t between(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }
  bool chance(double p) { return static_cast<double>(below(1 << 20)) < p * (1 << 20); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(below(static_cast<int64_t>(v.size())))];
  }

 private:
  Generator g_;
};

// Everyday words that carry no label: the noise around each demo's signal.
const std::vector<std::string>& demo_filler_words();

// `n` filler words.
std::vector<std::string> demo_filler(DemoRng& rng, int64_t n);
std::string join_words(const std::vector<std::string>& words);

// Creates `dir`, failing in one line naming --output_dir.
void create_demo_folder(const std::string& dir);

// JSON lines (the json files the commands read), written atomically.
void write_json_lines(const std::string& path, const std::vector<nlohmann::ordered_json>& rows);

// The examples of each split: enough for a clear signal, few enough for seconds of training.
constexpr int64_t kDemoTrainExamples = 2000, kDemoEvalExamples = 400;

// kDemoTrainExamples rows of `make(rng, texts)` (a json row; it appends the row's texts, for the vocab) into
// dir/train.json from stream 0 and kDemoEvalExamples into dir/validation.json from stream 1.
template <class Make>
void write_demo_json_splits(const std::string& dir, uint64_t seed, const Make& make,
                            std::vector<std::string>& texts) {
  for (uint64_t split = 0; split < 2; ++split) {
    DemoRng rng(seed, split);
    std::vector<nlohmann::ordered_json> rows;
    for (int64_t i = 0, n = split ? kDemoEvalExamples : kDemoTrainExamples; i < n; ++i)
      rows.push_back(make(rng, texts));
    write_json_lines(dir + (split ? "/validation.json" : "/train.json"), rows);
  }
}

// The small BERT every --demo trains from random init (also documented in README "Demo").
model::ModelConfig demo_model_config(int64_t vocab_size);

// tokenizer.json (+ vocab.txt and HF's side files) with every word of `texts`, and config.json:
// demo_model_config with initializer_range 0.1 (5x HF's) and no dropout. At HF's 0.02 the small model sits on
// a plateau for most of the demo's steps on some seeds (measured, docs/tasks.md: swag 0.61, mlm 0.19,
// classification 0.79 at seed 11). The command adds the head and its labels.
void write_demo_model(const std::string& dir, const std::vector<std::string>& texts);

}  // namespace ct::tasks

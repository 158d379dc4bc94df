#include "tasks/sequence_classification/sequence_demo.h"

#include "tasks/task_demo.h"

namespace ct::tasks {
namespace {

// 3-8 filler words with `words` at random places.
std::string sentence_with(DemoRng& rng, const std::vector<std::string>& words) {
  auto s = demo_filler(rng, rng.between(3, 8));
  for (const auto& w : words) s.insert(s.begin() + rng.below(static_cast<int64_t>(s.size()) + 1), w);
  return join_words(s);
}

template <class Data>
void sequence_files(ScriptArguments<Data>& a, const std::string& dir) {
  auto& d = a.data;
  if (!d.dataset_name.empty()) return;
  if (d.train_file.empty()) d.train_file = dir + "/train.json";
  if (d.validation_file.empty()) d.validation_file = dir + "/validation.json";
}

void glue_files(GlueArguments& a, const std::string& dir) {
  if (a.data.task_name.empty()) sequence_files(a, dir);
}

void write_glue(const GlueArguments& a, const std::string& dir) {
  create_demo_folder(dir);
  std::vector<std::string> texts = {"treasure"};
  write_demo_json_splits(
      dir, static_cast<uint64_t>(a.training.seed),
      [](DemoRng& rng, std::vector<std::string>& out) {
        const bool yes = rng.chance(0.5);
        const bool in_first = rng.chance(0.5);
        const std::string s1 = sentence_with(
            rng, yes && in_first ? std::vector<std::string>{"treasure"} : std::vector<std::string>{});
        const std::string s2 = sentence_with(
            rng, yes && !in_first ? std::vector<std::string>{"treasure"} : std::vector<std::string>{});
        out.push_back(s1);
        out.push_back(s2);
        return nlohmann::ordered_json{{"sentence1", s1}, {"sentence2", s2}, {"label", yes ? "yes" : "no"}};
      },
      texts);
  write_demo_model(dir, texts);
}

void write_classification(const ClassificationArguments& a, const std::string& dir) {
  create_demo_folder(dir);
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kTopics = {
      {"animal", {"cat", "dog", "horse", "bird", "fish"}},
      {"color", {"red", "green", "blue", "yellow", "purple"}},
      {"number", {"two", "three", "five", "seven", "nine"}}};
  std::vector<std::string> texts;
  for (const auto& [name, words] : kTopics) texts.insert(texts.end(), words.begin(), words.end());
  write_demo_json_splits(
      dir, static_cast<uint64_t>(a.training.seed),
      [](DemoRng& rng, std::vector<std::string>& out) {
        std::vector<std::string> words;
        auto labels = nlohmann::ordered_json::array();
        for (const auto& [name, topic] : kTopics)
          if (rng.chance(0.4)) {
            words.push_back(rng.pick(topic));
            labels.push_back(name);
          }
        const std::string s = sentence_with(rng, words);
        out.push_back(s);
        return nlohmann::ordered_json{{"sentence", s}, {"label", labels}};
      },
      texts);
  write_demo_model(dir, texts);
}

}  // namespace

const TaskDemo<GlueDataArguments>& glue_demo() {
  static const TaskDemo<GlueDataArguments> d{"eval_accuracy", nullptr, glue_files, write_glue};
  return d;
}

const TaskDemo<ClassificationDataArguments>& classification_demo() {
  static const TaskDemo<ClassificationDataArguments> d{
      "eval_f1", [](ClassificationArguments& a) { a.training.num_train_epochs = 4; },
      sequence_files<ClassificationDataArguments>, write_classification};
  return d;
}

}  // namespace ct::tasks

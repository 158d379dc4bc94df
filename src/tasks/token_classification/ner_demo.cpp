#include "tasks/token_classification/ner_demo.h"

#include "tasks/task_demo.h"

namespace ct::tasks {
namespace {

const std::vector<std::string> kFirst = {"alice", "bruno", "chen", "dara", "emil", "farah", "goran", "hana"};
const std::vector<std::string> kLast = {"smith", "okafor", "tanaka", "novak", "silva", "berg"};
const std::vector<std::string> kCities = {"paris", "lagos", "osaka", "lima", "oslo", "cairo", "quito"};

void ner_files(NerArguments& a, const std::string& dir) {
  auto& d = a.data;
  if (!d.dataset_name.empty() || !d.train_file.empty() || !d.validation_file.empty()) return;
  d.train_file = dir + "/train.json";
  d.validation_file = dir + "/validation.json";
}

void write_ner(const NerArguments& a, const std::string& dir) {
  create_demo_folder(dir);
  std::vector<std::string> texts = {join_words(kFirst), join_words(kLast), join_words(kCities)};
  write_demo_json_splits(
      dir, static_cast<uint64_t>(a.training.seed),
      [](DemoRng& rng, std::vector<std::string>&) {
        auto tokens = nlohmann::ordered_json::array(), tags = nlohmann::ordered_json::array();
        auto add = [&](const std::string& w, const char* tag) {
          tokens.push_back(w);
          tags.push_back(tag);
        };
        for (int64_t i = 0, n = rng.between(4, 10); i < n; ++i) {
          const int64_t r = rng.below(10);
          if (r < 2) {
            add(rng.pick(kFirst), "B-PER");
            if (rng.chance(0.5)) add(rng.pick(kLast), "I-PER");
          } else if (r < 3) {
            add(rng.pick(kCities), "B-LOC");
          } else {
            add(rng.pick(demo_filler_words()), "O");
          }
        }
        return nlohmann::ordered_json{{"tokens", tokens}, {"ner_tags", tags}};
      },
      texts);
  for (const auto& w : demo_filler_words()) texts.push_back(w);
  write_demo_model(dir, texts);
}

}  // namespace

const TaskDemo<NerDataArguments>& ner_demo() {
  static const TaskDemo<NerDataArguments> d{"eval_f1", nullptr, ner_files, write_ner};
  return d;
}

}  // namespace ct::tasks

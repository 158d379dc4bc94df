#include "tasks/multiple_choice/swag_demo.h"

#include <algorithm>

#include "tasks/task_demo.h"

namespace ct::tasks {
namespace {

const std::vector<std::string> kObjects = {"apple",  "violin", "rocket", "lantern", "anchor", "mirror",
                                           "ticket", "basket", "helmet", "pillow",  "wallet", "candle"};

void swag_files(SwagArguments& a, const std::string& dir) {
  auto& d = a.data;
  if (!d.train_file.empty() || !d.validation_file.empty()) return;
  d.train_file = dir + "/train.json";
  d.validation_file = dir + "/validation.json";
}

void write_swag(const SwagArguments& a, const std::string& dir) {
  create_demo_folder(dir);
  std::vector<std::string> texts = {join_words(kObjects), "then"};
  write_demo_json_splits(
      dir, static_cast<uint64_t>(a.training.seed),
      [](DemoRng& rng, std::vector<std::string>&) {
        // Four distinct objects: the context's first, the others for the wrong endings.
        std::vector<std::string> objects;
        while (objects.size() < 4) {
          const auto& o = rng.pick(kObjects);
          if (std::find(objects.begin(), objects.end(), o) == objects.end()) objects.push_back(o);
        }
        auto context = demo_filler(rng, rng.between(3, 6));
        context.insert(context.begin() + rng.below(static_cast<int64_t>(context.size()) + 1), objects[0]);
        const int64_t label = rng.below(4);
        nlohmann::ordered_json row{{"sent1", join_words(context)}, {"sent2", "then"}};
        for (int64_t c = 0, wrong = 1; c < 4; ++c) {
          auto ending = demo_filler(rng, rng.between(2, 4));
          const auto& object = c == label ? objects[0] : objects[static_cast<size_t>(wrong++)];
          ending.insert(ending.begin() + rng.below(static_cast<int64_t>(ending.size()) + 1), object);
          row["ending" + std::to_string(c)] = join_words(ending);
        }
        row["label"] = label;
        return row;
      },
      texts);
  for (const auto& w : demo_filler_words()) texts.push_back(w);
  write_demo_model(dir, texts);
}

}  // namespace

const TaskDemo<SwagDataArguments>& swag_demo() {
  static const TaskDemo<SwagDataArguments> d{
      "eval_accuracy", [](SwagArguments& a) { a.training.num_train_epochs = 4; }, swag_files, write_swag};
  return d;
}

}  // namespace ct::tasks

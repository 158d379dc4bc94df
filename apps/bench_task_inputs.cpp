#include "apps/bench_task_inputs.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace ct::app {
namespace {

using nlohmann::json;

std::string text_field(const json& row, const char* key, const std::string& where) {
  const auto it = row.find(key);
  CT_CHECK(it != row.end() && it->is_string(), where, ": expected a string field \"", key, "\"");
  return it->get<std::string>();
}

// Every non-empty line of `path` as a JSON object, with "file:line" for errors.
template <typename F>
void each_json_line(const std::string& path, F&& row) {
  std::ifstream in(path);
  CT_CHECK(in, "--train_file: cannot read ", path);
  int64_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(n);
    json j = json::parse(line, nullptr, false);
    CT_CHECK(!j.is_discarded() && j.is_object(), where, ": expected one JSON object per line");
    row(j, where);
  }
}

}  // namespace

int64_t BenchTaskInputs::size() const {
  return static_cast<int64_t>(qa.size() + pairs.size() + words.size() + texts.size() + choices.size());
}

BenchTaskInputs read_bench_task_inputs(const std::string& task, const std::string& path) {
  BenchTaskInputs in;
  if (task == "qa") {
    tasks::SquadReadStats stats;
    in.qa = tasks::read_squad(path, &stats);
    in.skipped = stats.skipped;
  } else if (task == "glue") {
    each_json_line(path, [&](const json& j, const std::string& where) {
      tasks::TextPair p{text_field(j, "sentence1", where), std::nullopt};
      if (j.contains("sentence2") && !j["sentence2"].is_null()) p.second = text_field(j, "sentence2", where);
      in.pairs.push_back(std::move(p));
    });
  } else if (task == "ner") {
    each_json_line(path, [&](const json& j, const std::string& where) {
      const auto it = j.find("tokens");
      CT_CHECK(it != j.end() && it->is_array(), where, ": expected a list of words \"tokens\"");
      std::vector<std::string> w;
      for (const auto& t : *it) {
        CT_CHECK(t.is_string(), where, ": \"tokens\" holds a non-string");
        w.push_back(t.get<std::string>());
      }
      in.words.push_back(std::move(w));
    });
  } else if (task == "swag") {
    each_json_line(path, [&](const json& j, const std::string& where) {
      tasks::MultipleChoiceExample e;
      e.context = text_field(j, "sent1", where);
      e.header = text_field(j, "sent2", where);
      for (int c = 0; c < tasks::kSwagNumChoices; ++c)
        e.endings.push_back(text_field(j, ("ending" + std::to_string(c)).c_str(), where));
      if (j.contains("label")) {
        CT_CHECK(j["label"].is_number_integer(), where, ": expected an integer \"label\"");
        e.label = j["label"].get<int64_t>();
      }
      in.choices.push_back(std::move(e));
    });
  } else if (task == "mlm") {
    std::ifstream f(path);
    CT_CHECK(f, "--train_file: cannot read ", path);
    for (std::string line; std::getline(f, line);) in.texts.push_back(std::move(line));
  } else {
    fail("--task: expected qa, glue, ner, mlm or swag, got '", task, "'");
  }
  CT_CHECK(in.size() > 0, "--train_file: ", path, " holds no usable examples");
  return in;
}

}  // namespace ct::app

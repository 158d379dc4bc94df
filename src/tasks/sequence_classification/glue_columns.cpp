#include "tasks/sequence_classification/glue_columns.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "tasks/metrics/glue_metric.h"

namespace ct::tasks {

TextColumns glue_task_columns(std::string_view task) {
  if (task == "cola" || task == "sst2") return {"sentence", std::nullopt};
  if (task == "mnli") return {"premise", "hypothesis"};
  if (task == "qnli") return {"question", "sentence"};
  if (task == "qqp") return {"question1", "question2"};
  if (task == "mrpc" || task == "rte" || task == "stsb" || task == "wnli") return {"sentence1", "sentence2"};
  fail("--task_name ", task, " is not a GLUE task (expected one of ", glue_task_list(), ")");
}

TextColumns local_text_columns(const std::vector<std::string>& column_names) {
  std::vector<std::string> texts;
  for (const auto& c : column_names)
    if (c != "label") texts.push_back(c);
  CT_CHECK(!texts.empty(), "the train file has no column besides 'label' (expected one or two text columns)");
  auto has = [&](const char* c) { return std::find(texts.begin(), texts.end(), c) != texts.end(); };
  if (has("sentence1") && has("sentence2")) return {"sentence1", "sentence2"};
  if (texts.size() >= 2) return {texts[0], texts[1]};
  return {texts[0], std::nullopt};
}

std::vector<std::string> sorted_label_list(const std::vector<std::string>& train_labels) {
  std::set<std::string> s(train_labels.begin(), train_labels.end());
  return {s.begin(), s.end()};
}

std::vector<int64_t> sorted_label_list(const std::vector<int64_t>& train_labels) {
  std::set<int64_t> s(train_labels.begin(), train_labels.end());
  return {s.begin(), s.end()};
}

}  // namespace ct::tasks

// Which columns run_glue.py reads: the two text columns of each GLUE task (task_to_keys), or for local
// csv/json files without --task_name: "sentence1"/"sentence2" when both exist, else the first two columns
// other than "label", else the only one. And its labels for local files: float labels mean a regression,
// otherwise the distinct label values sorted.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ct::tasks {

struct TextColumns {
  std::string first;
  std::optional<std::string> second;  // absent for single-sentence tasks
};

// task_to_keys[task]; fails naming the task when it is not a GLUE task.
TextColumns glue_task_columns(std::string_view task);

// The local-files choice over the train split's column names, in file order; fails when there is no column
// but "label".
TextColumns local_text_columns(const std::vector<std::string>& column_names);

// label_list = sorted(unique(train labels)), as strings compare (Python sorts str labels lexicographically by
// code point, which is what std::string's byte order gives for UTF-8).
std::vector<std::string> sorted_label_list(const std::vector<std::string>& train_labels);
// The same for integer labels (sorted numerically).
std::vector<int64_t> sorted_label_list(const std::vector<int64_t>& train_labels);

}  // namespace ct::tasks

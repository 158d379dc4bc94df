// A task's metrics as its compute_metrics returns them: named values in order, counts flagged so the result
// files write them as integers, as Python's ints.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ct::tasks {

struct Metric {
  std::string name;
  double value = 0;
  bool integer = false;  // counts (total, HasAns_total, ...) print as integers
};
using Metrics = std::vector<Metric>;

// Value of `name` in `m`; throws ct::Error when absent.
double metric(const Metrics& m, std::string_view name);

// {"<prefix>exact_match": 80.0, ...}: the metrics as the scripts' result files hold them (integer counts as
// integers).
nlohmann::json metrics_to_json(const Metrics& m, const std::string& prefix);

}  // namespace ct::tasks

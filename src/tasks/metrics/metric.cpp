#include "tasks/metrics/metric.h"

#include "core/error.h"

namespace ct::tasks {

double metric(const Metrics& m, std::string_view name) {
  for (const Metric& x : m) {
    if (x.name == name) return x.value;
  }
  fail("metric '", name, "' not computed");
}

nlohmann::json metrics_to_json(const Metrics& m, const std::string& prefix) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& x : m) {
    if (x.integer)
      j[prefix + x.name] = static_cast<int64_t>(x.value);
    else
      j[prefix + x.name] = x.value;
  }
  return j;
}

}  // namespace ct::tasks

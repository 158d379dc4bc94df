#include "tasks/sequence_classification/predict_results.h"

#include <cstdio>

#include "core/error.h"

namespace ct::tasks {
namespace {

const std::string& label_name(const std::vector<std::string>& label_list, int64_t id, size_t index) {
  CT_CHECK(id >= 0 && id < static_cast<int64_t>(label_list.size()), "prediction ", index, " is label id ", id,
           " (expected 0..", label_list.size() - 1, ")");
  return label_list[static_cast<size_t>(id)];
}

}  // namespace

std::string predict_results_classes(std::span<const int64_t> predicted_ids,
                                    const std::vector<std::string>& label_list) {
  std::string out = "index\tprediction\n";
  for (size_t i = 0; i < predicted_ids.size(); ++i)
    out += str(i, "\t", label_name(label_list, predicted_ids[i], i), "\n");
  return out;
}

std::string predict_results_regression(std::span<const float> predictions) {
  std::string out = "index\tprediction\n";
  char buf[64];
  for (size_t i = 0; i < predictions.size(); ++i) {
    // Python formats a float32 through its double value, correctly rounded, as printf does.
    std::snprintf(buf, sizeof buf, "%3.3f", static_cast<double>(predictions[i]));
    out += str(i, "\t", buf, "\n");
  }
  return out;
}

std::string predict_results_multilabel(std::span<const int64_t> cells,
                                       const std::vector<std::string>& label_list) {
  const size_t n = label_list.size();
  CT_CHECK(n > 0 && cells.size() % n == 0, "multi-label predictions: ", cells.size(), " cells for ", n,
           " labels (expected a whole number of rows)");
  std::string out = "index\tprediction\n";
  for (size_t row = 0; row * n < cells.size(); ++row) {
    std::string items;
    for (size_t k = 0; k < n; ++k)
      if (cells[row * n + k] == 1) items += (items.empty() ? "" : ", ") + python_str_repr(label_list[k]);
    out += str(row, "\t[", items, "]\n");
  }
  return out;
}

std::string glue_predict_file_name(std::string_view task) {
  return str("predict_results_", task.empty() ? std::string_view("None") : task, ".txt");
}

std::string python_str_repr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

}  // namespace ct::tasks

#include "tasks/text_splits.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "tasks/table_cells.h"
#include "train/dataset_split.h"

namespace ct::tasks {

int64_t percent_boundary(int64_t percent, int64_t num_rows) {
  // nearbyint under the default rounding mode rounds halves to even, as Python's round().
  return static_cast<int64_t>(
      std::nearbyint(static_cast<double>(percent) * static_cast<double>(num_rows) / 100.0));
}

data::DatasetTable slice_rows(const data::DatasetTable& t, int64_t from, int64_t to,
                              const std::string& name) {
  data::DatasetTable out;
  out.features = t.features;
  out.source = t.source + " " + name;
  out.fingerprint = t.fingerprint.empty() ? std::string() : t.fingerprint + " " + name;
  out.table.names = t.table.names;
  for (const auto& col : t.table.columns)
    out.table.columns.emplace_back(col.begin() + from, col.begin() + to);
  out.table.num_rows = to - from;
  return out;
}

RawTextSplits read_text_splits(const TextSplitsRequest& d, const train::ModelArguments& model,
                               const train::DistContext& dist) {
  RawTextSplits r;
  bool has_validation = false;
  if (!d.dataset_name.empty()) {
    const data::DatasetRequest request = train::dataset_request(d.dataset_name, d.dataset_config_name, model);
    const auto names = train::dataset_split_names(request, dist);
    auto has = [&](const char* s) { return std::find(names.begin(), names.end(), s) != names.end(); };
    has_validation = has("validation");
    if (has("train") && (d.do_train || !has_validation))
      r.train = train::read_dataset_split(request, "train", dist);
    if (has_validation && d.do_eval) r.validation = train::read_dataset_split(request, "validation", dist);
  } else {
    data::TableReadOptions o;
    o.keep_linebreaks = d.keep_linebreaks;
    if (!d.train_file.empty()) r.train = data::read_table_files({d.train_file}, "--train_file", o);
    has_validation = !d.validation_file.empty();
    if (has_validation) r.validation = data::read_table_files({d.validation_file}, "--validation_file", o);
  }
  if (!has_validation && r.train) {
    // load_dataset(split="train[:N%]") and "train[N%:]".
    const int64_t n = r.train->num_rows();
    const int64_t k = percent_boundary(d.validation_split_percentage, n);
    const std::string p = std::to_string(d.validation_split_percentage);
    r.validation = slice_rows(*r.train, 0, k, "[:" + p + "%]");
    r.train = slice_rows(*r.train, k, n, "[" + p + "%:]");
  }
  return r;
}

std::string text_column_name(const data::DatasetTable& table) {
  if (table.table.names.empty()) fail(table.source, ": no columns");
  return table.has_column("text") ? "text" : table.table.names[0];
}

std::vector<std::string> texts_of(const data::DatasetTable& table, const std::string& column) {
  data::DatasetTable only;
  only.source = table.source;
  only.table.names = {column};
  only.table.columns.push_back(table.column(column));
  only.table.num_rows = table.num_rows();
  for (auto& v : only.table.columns[0])
    if (v.is_null()) v.kind = parquet::Value::Kind::String;
  return text_column(only, column);
}

}  // namespace ct::tasks

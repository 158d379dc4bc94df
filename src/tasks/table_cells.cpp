#include "tasks/table_cells.h"

#include "core/error.h"

namespace ct::tasks {
namespace {

using parquet::Value;

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::Null:
      return "null";
    case Value::Kind::Bool:
      return "a bool";
    case Value::Kind::Int:
      return "an integer";
    case Value::Kind::Double:
      return "a float";
    case Value::Kind::String:
      return "a string";
    case Value::Kind::List:
      return "a list";
    case Value::Kind::Struct:
      return "a struct";
  }
  return "?";
}

[[noreturn]] void bad_cell(const data::DatasetTable& t, const std::string& column, int64_t row,
                           const std::string& expected, const Value& v) {
  fail(t.source, ": column \"", column, "\" row ", row, ": expected ", expected, ", got ", kind_name(v.kind));
}

}  // namespace

std::vector<std::string> text_column(const data::DatasetTable& t, const std::string& name) {
  const auto& col = t.column(name);
  std::vector<std::string> out;
  out.reserve(col.size());
  for (size_t r = 0; r < col.size(); ++r) {
    if (col[r].kind != Value::Kind::String) bad_cell(t, name, static_cast<int64_t>(r), "text", col[r]);
    out.push_back(col[r].s);
  }
  return out;
}

std::vector<std::vector<std::string>> text_list_column(const data::DatasetTable& t, const std::string& name) {
  const auto& col = t.column(name);
  std::vector<std::vector<std::string>> out(col.size());
  for (size_t r = 0; r < col.size(); ++r) {
    if (col[r].kind != Value::Kind::List)
      bad_cell(t, name, static_cast<int64_t>(r), "a list of strings", col[r]);
    for (const auto& item : col[r].items) {
      if (item.kind != Value::Kind::String)
        bad_cell(t, name, static_cast<int64_t>(r), "a list of strings (an item is not)", item);
      out[r].push_back(item.s);
    }
  }
  return out;
}

std::string label_key(const data::DatasetTable& t, const std::string& column, int64_t row) {
  const Value& v = t.column(column)[static_cast<size_t>(row)];
  switch (v.kind) {
    case Value::Kind::String:
      return v.s;
    case Value::Kind::Int:
      return std::to_string(v.i);
    case Value::Kind::Bool:
      return v.i ? "True" : "False";
    default:
      bad_cell(t, column, row, "a label (a string, an integer or a bool)", v);
  }
}

double label_number(const data::DatasetTable& t, const std::string& column, int64_t row) {
  const Value& v = t.column(column)[static_cast<size_t>(row)];
  if (v.kind == Value::Kind::Double) return v.d;
  if (v.kind == Value::Kind::Int) return static_cast<double>(v.i);
  bad_cell(t, column, row, "a number (a regression label)", v);
}

bool is_float_column(const data::DatasetTable& t, const std::string& column) {
  if (t.features)
    if (const auto* f = t.features->field(column); f && f->kind == parquet::Feature::Kind::Value)
      return f->dtype == "float32" || f->dtype == "float64" || f->dtype == "float16";
  for (const auto& v : t.column(column))
    if (v.kind == Value::Kind::Double) return true;
  return false;
}

}  // namespace ct::tasks

// JSON as datasets' json loader reads it (packaged_modules/json/json.py). Without `field` it hands the bytes
// to pyarrow's JSON-lines reader, and only when that fails re-reads the whole file as one document
// (pandas.read_json). So the first non-blank line decides: a complete object there means JSON lines (one
// record per non-blank line, even a dict of lists on one line is a single record, as pyarrow reads it);
// anything else (a "[" or "{" opening a pretty-printed document) means one document: an array of records (or
// of strings: column "text"), an object whose only member is that array, or a dict of equal-length lists.
// With `field` the file is always one document and the records (or the dict of lists) sit under that key.
// Cells keep JSON's kinds; a column then gets pyarrow's one type per column where pyarrow finds one:
// integers beside floats become floats, structs take every key any row has (unify_column).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/table_loaders.h"

namespace ct::data {
namespace {

using json = nlohmann::ordered_json;
using parquet::Value;

// pyarrow refuses nesting past a depth too; this keeps the conversion's recursion far from the stack's end.
constexpr int kMaxDepth = 256;

// Takes the strings out of `j` rather than copying them.
Value to_value(json& j, const std::string& where, int depth) {
  if (depth > kMaxDepth) fail(where, ": values nested deeper than ", kMaxDepth, " levels");
  Value v;
  switch (j.type()) {
    case json::value_t::null:
      break;
    case json::value_t::boolean:
      v.kind = Value::Kind::Bool;
      v.i = j.get<bool>() ? 1 : 0;
      break;
    case json::value_t::number_integer:
      v.kind = Value::Kind::Int;
      v.i = j.get<int64_t>();
      break;
    case json::value_t::number_unsigned: {
      // Past int64 pyarrow would go to uint64 or double; double keeps the magnitude.
      const uint64_t u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        v.kind = Value::Kind::Int;
        v.i = static_cast<int64_t>(u);
      } else {
        v.kind = Value::Kind::Double;
        v.d = static_cast<double>(u);
      }
      break;
    }
    case json::value_t::number_float:
      v.kind = Value::Kind::Double;
      v.d = j.get<double>();
      break;
    case json::value_t::string:
      v.kind = Value::Kind::String;
      v.s = std::move(j.get_ref<std::string&>());
      break;
    case json::value_t::array:
      v.kind = Value::Kind::List;
      v.items.reserve(j.size());
      for (auto& item : j) v.items.push_back(to_value(item, where, depth + 1));
      break;
    case json::value_t::object:
      v.kind = Value::Kind::Struct;
      for (auto it = j.begin(); it != j.end(); ++it) {
        v.keys.push_back(it.key());
        v.items.push_back(to_value(it.value(), where, depth + 1));
      }
      break;
    default:
      fail(where, ": unsupported JSON value (", j.type_name(), ")");
  }
  return v;
}

// Rows of records into columns in first-seen key order, a record's missing keys as nulls.
class RecordColumns {
 public:
  void add(json& record, const std::string& where) {
    for (auto it = record.begin(); it != record.end(); ++it) {
      auto [pos, inserted] = index_.try_emplace(it.key(), t_.names.size());
      if (inserted) {
        t_.names.push_back(it.key());
        t_.columns.emplace_back(static_cast<size_t>(t_.num_rows));
      }
      t_.columns[pos->second].push_back(to_value(it.value(), where, 1));
    }
    ++t_.num_rows;
    for (auto& c : t_.columns)
      if (static_cast<int64_t>(c.size()) < t_.num_rows) c.emplace_back();
  }

  parquet::Table finish() {
    for (auto& c : t_.columns) unify_column(c);
    return std::move(t_);
  }

 private:
  parquet::Table t_;
  std::unordered_map<std::string, size_t> index_;
};

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1, column 9: "
// prefix, whose position is the document's, not the file's line; and short, since its "last read" token can
// be the rest of the file after an unterminated string.
std::string reason(const json::exception& e) {
  std::string what = e.what();
  const size_t p = what.find("parse error");
  const size_t colon = p == std::string::npos ? std::string::npos : what.find(": ", p);
  if (colon != std::string::npos) {
    what.erase(0, colon + 2);
  } else if (const size_t bracket = what.find("] "); bracket != std::string::npos) {
    what.erase(0, bracket + 2);
  }
  constexpr size_t kMax = 240;
  if (what.size() > kMax) {
    size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(what[cut]) & 0xC0) == 0x80)
      --cut;  // not inside a UTF-8 char
    what.resize(cut);
    what += "...";
  }
  return what;
}

int64_t line_at(std::string_view text, size_t byte) {
  byte = std::min(byte, text.size());
  int64_t line = 1;
  for (size_t i = 0; i < byte; ++i) line += text[i] == '\n';
  return line;
}

json parse_document(std::string_view text, const std::string& source) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // e.byte is 1-based, at the character that broke the parse.
    fail(source, ": line ", line_at(text, e.byte > 0 ? e.byte - 1 : 0), ": malformed JSON (", reason(e), ")");
  } catch (const json::exception& e) {
    fail(source, ": malformed JSON (", reason(e), ")");
  }
}

std::string keys_of(const json& obj) {
  std::string s;
  for (auto it = obj.begin(); it != obj.end(); ++it) s += (s.empty() ? "" : ", ") + it.key();
  return s;
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

parquet::Table from_json_lines(std::string_view text, const std::string& source) {
  RecordColumns cols;
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    ++line_no;
    pos = nl + 1;
    if (is_blank(line)) continue;
    const std::string where = source + ": line " + std::to_string(line_no);
    json rec;
    try {
      rec = json::parse(line.begin(), line.end());
    } catch (const json::exception& e) {
      fail(where, ": malformed JSON (", reason(e), ")");
    }
    if (!rec.is_object())
      fail(where, ": expected a JSON object (JSON lines hold one record per line), got ", rec.type_name());
    cols.add(rec, where);
  }
  return cols.finish();
}

// An array of records (objects), or of strings as one "text" column (datasets names it so).
parquet::Table from_records(json& array, const std::string& source, const std::string& name) {
  bool all_strings = !array.empty();
  for (const auto& item : array) all_strings = all_strings && item.is_string();
  if (all_strings) {
    parquet::Table t;
    t.names = {"text"};
    t.columns.resize(1);
    for (auto& item : array) t.columns[0].push_back(to_value(item, source, 1));
    t.num_rows = static_cast<int64_t>(array.size());
    return t;
  }
  RecordColumns cols;
  for (size_t k = 0; k < array.size(); ++k) {
    const std::string where = source + ": " + name + "[" + std::to_string(k) + "]";
    if (!array[k].is_object()) fail(where, ": expected a record (a JSON object), got ", array[k].type_name());
    cols.add(array[k], where);
  }
  return cols.finish();
}

parquet::Table from_dict_of_lists(json& obj, const std::string& source) {
  parquet::Table t;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const int64_t n = static_cast<int64_t>(it.value().size());
    if (t.names.empty()) {
      t.num_rows = n;
    } else if (n != t.num_rows) {
      fail(source, ": a dict of lists needs lists of one length: '", t.names[0], "' has ", t.num_rows,
           " values, '", it.key(), "' has ", n);
    }
    t.names.push_back(it.key());
    std::vector<Value> column;
    column.reserve(static_cast<size_t>(n));
    const std::string where = str(source, ": '", it.key(), "'");
    for (auto& item : it.value()) column.push_back(to_value(item, where, 1));
    unify_column(column);
    t.columns.push_back(std::move(column));
  }
  return t;
}

bool all_arrays(const json& obj) {
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (!it.value().is_array()) return false;
  return !obj.empty();
}

parquet::Table from_field(json& doc, const std::string& source, const std::string& field) {
  if (!doc.is_object())
    fail(source, ": records under field '", field, "' need a JSON object at the top level, found a JSON ",
         doc.type_name());
  const auto it = doc.find(field);
  if (it == doc.end()) fail(source, ": no field '", field, "' (fields: ", keys_of(doc), ")");
  if (it->is_array()) return from_records(*it, source, field);
  if (it->is_object() && all_arrays(*it)) return from_dict_of_lists(*it, source);
  fail(source, ": field '", field, "' holds a ", it->type_name(),
       ", expected an array of records or a dict of lists");
}

parquet::Table from_document(json& doc, const std::string& source) {
  if (doc.is_array()) return from_records(doc, source, "records");
  if (!doc.is_object())
    fail(source, ": expected JSON lines, an array of records or an object, got a ", doc.type_name());
  if (doc.size() == 1) {
    auto& only = doc.begin().value();
    if (only.is_array() && !only.empty() && only[0].is_object())
      return from_records(only, source, doc.begin().key());
  }
  if (all_arrays(doc)) return from_dict_of_lists(doc, source);
  fail(source, ": one JSON object that is neither a dict of lists nor an object holding an array of records",
       " (fields: ", keys_of(doc), "); JSON lines need one record per line");
}

}  // namespace

parquet::Table read_json_table(std::string_view text, const std::string& source, const std::string& field) {
  if (is_blank(text)) fail(source, ": no JSON records (the file is empty)");
  if (!field.empty()) {
    json doc = parse_document(text, source);
    return from_field(doc, source, field);
  }
  size_t pos = 0;
  std::string_view first;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    first = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!is_blank(first)) break;
  }
  const json head = json::parse(first.begin(), first.end(), nullptr, false);
  if (!head.is_discarded() && head.is_object()) return from_json_lines(text, source);
  json doc = parse_document(text, source);
  return from_document(doc, source);
}

}  // namespace ct::data

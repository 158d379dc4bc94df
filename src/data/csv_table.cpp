// CSV as datasets' csv loader reads it: pandas.read_csv with its defaults (datasets' CsvConfig leaves them),
// then pyarrow.Table.from_pandas. What that does to a file, rule by rule (pandas/io/parsers,
// _libs/parsers.pyx, src/parser/tokenizer.c):
//   - the first record is the header; an empty name becomes "Unnamed: k", a repeated one "a.1", "a.2"
//     (mangle_dupe_cols);
//   - blank lines are skipped (skip_blank_lines); a record with fewer fields than the header is padded with
//     NaN, one with more is an error, "Expected N fields in line L, saw M" (on_bad_lines="error");
//   - a cell equal to one of pandas' default NA strings (STR_NA_VALUES, "" among them) is NaN, which
//     from_pandas turns into null;
//   - a column is typed from its non-NA cells (_infer_types): every one an integer (str_to_int64, spaces
//     around allowed) gives int64, unless the column has a NaN: then float64, as numpy ints cannot hold NaN;
//     every one a number (xstrtod, or inf / infinity) gives float64; every one true or false in any case
//     (to_boolean's strcasecmp) gives bool, with nulls for NaN as from_pandas makes of an object column;
//     anything else keeps the cells as strings, verbatim. An integer past int64 counts as a number here
//     (pandas would try uint64, which Value does not have).
// pandas counts a quoted field's line breaks into no line; the errors here give the record's first line in
// the file, which is what an editor shows.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>

#include "core/error.h"
#include "data/csv.h"
#include "data/table_loaders.h"

namespace ct::data {
namespace {

using parquet::Value;

// pandas' STR_NA_VALUES (pandas/_libs/parsers.pyx, "None" since 2.0).
bool is_na(const std::string& s) {
  static const std::set<std::string, std::less<>> na = {
      "",     "#N/A", "#N/A N/A", "#NA",  "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
      "<NA>", "N/A",  "NA",       "NULL", "NaN",     "None",     "n/a",  "nan",  "null"};
  return na.count(s) > 0;
}

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool parse_int(std::string_view s, int64_t* out) {
  s = trim(s);
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  // Accumulate negatively so that INT64_MIN fits; out of range is not an int (pandas then tries float).
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const int d = c - '0';
    if (v < (std::numeric_limits<int64_t>::min() + d) / 10) return false;
    v = v * 10 - d;
  }
  if (!neg && v == std::numeric_limits<int64_t>::min()) return false;
  *out = neg ? v : -v;
  return true;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (std::tolower(static_cast<unsigned char>(a[k])) != b[k]) return false;
  return true;
}

// xstrtod's grammar: [sign] digits [. digits] [(e|E) [sign] digits], at least one mantissa digit; no hex,
// no "nan" (an NA string already); plus pandas' explicit inf / infinity, any case.
bool parse_double(std::string_view s, double* out) {
  // _try_double's own words for infinity, compared untrimmed.
  {
    std::string_view w = s;
    const bool neg = !w.empty() && w[0] == '-';
    if (!w.empty() && (w[0] == '+' || w[0] == '-')) w.remove_prefix(1);
    if (iequals(w, "inf") || iequals(w, "infinity")) {
      *out = neg ? -HUGE_VAL : HUGE_VAL;
      return true;
    }
  }
  s = trim(s);
  std::string_view body = s;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) body.remove_prefix(1);
  size_t i = 0, digits = 0;
  while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++digits;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
    const size_t exp_start = i;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i;
    if (i == exp_start) return false;
  }
  if (i != body.size()) return false;
  const std::string copy(s);
  *out = std::strtod(copy.c_str(), nullptr);  // overflow gives +-inf, as xstrtod does
  return true;
}

// _try_bool_flex: the default true/false values, then to_boolean's strcasecmp with "TRUE" / "FALSE".
int parse_bool(const std::string& s) {
  if (iequals(s, "true")) return 1;
  if (iequals(s, "false")) return 0;
  return -1;
}

// mangle_dupe_cols and the "Unnamed: k" names of empty header cells.
std::vector<std::string> column_names(const std::vector<std::string>& header) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (size_t k = 0; k < header.size(); ++k) {
    std::string name = header[k].empty() ? "Unnamed: " + std::to_string(k) : header[k];
    if (seen.count(name)) {
      for (int n = 1;; ++n) {
        std::string candidate = name + "." + std::to_string(n);
        if (!seen.count(candidate)) {
          name = std::move(candidate);
          break;
        }
      }
    }
    seen.insert(name);
    names.push_back(std::move(name));
  }
  return names;
}

// One column's cells from its raw strings (nullptr: a missing trailing field), typed as _infer_types does.
// The strings are moved out of `raw`.
std::vector<Value> type_column(const std::vector<std::string*>& raw) {
  bool all_int = true, all_num = true, all_bool = true, any_na = false, any_value = false;
  for (const std::string* s : raw) {
    if (!s || is_na(*s)) {
      any_na = true;
      continue;
    }
    any_value = true;
    int64_t i;
    double d;
    if (all_int && !parse_int(*s, &i)) all_int = false;
    if (all_num && !all_int && !parse_double(*s, &d)) all_num = false;
    if (all_bool && parse_bool(*s) < 0) all_bool = false;
    if (!all_num && !all_bool) break;
  }
  std::vector<Value> out(raw.size());
  if (!any_value) return out;  // all NaN: float64 of nulls
  for (size_t r = 0; r < raw.size(); ++r) {
    std::string* s = raw[r];
    if (!s || is_na(*s)) continue;
    Value& v = out[r];
    if (all_int && !any_na) {
      v.kind = Value::Kind::Int;
      parse_int(*s, &v.i);
    } else if (all_num) {
      v.kind = Value::Kind::Double;
      parse_double(*s, &v.d);
    } else if (all_bool) {
      v.kind = Value::Kind::Bool;
      v.i = parse_bool(*s);
    } else {
      v.kind = Value::Kind::String;
      v.s = std::move(*s);
    }
  }
  return out;
}

}  // namespace

parquet::Table read_csv_table(std::string_view text, const std::string& source) {
  check_utf8(text, source);
  std::vector<int64_t> lines;
  auto records = parse_csv(text, source, &lines);
  if (records.empty()) fail(source, ": No columns to parse from file (an empty CSV; expected a header row)");
  parquet::Table t;
  t.names = column_names(records[0]);
  const size_t width = t.names.size();
  for (size_t r = 1; r < records.size(); ++r)
    if (records[r].size() > width)
      fail(source, ": Expected ", width, " fields in line ", lines[r], ", saw ", records[r].size(),
           " (a field holding a comma needs double quotes)");
  t.num_rows = static_cast<int64_t>(records.size()) - 1;
  std::vector<std::string*> raw(records.size() - 1);
  for (size_t c = 0; c < width; ++c) {
    for (size_t r = 1; r < records.size(); ++r) raw[r - 1] = c < records[r].size() ? &records[r][c] : nullptr;
    t.columns.push_back(type_column(raw));
  }
  return t;
}

}  // namespace ct::data

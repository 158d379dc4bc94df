// The per-format readers behind read_table_files, one file's text in, its columns out, each with the typing
// rules of the library `datasets` hands that format to (pandas for csv, pyarrow's JSON reader for json,
// Python's line splitting for text). They throw ct::Error lines that start with `source`; read_table_files
// puts the flag in front, selects columns and concatenates files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parquet/parquet_file.h"

namespace ct::data {

// pandas.read_csv defaults (see csv_table.cpp for the rules and where pandas states them).
parquet::Table read_csv_table(std::string_view text, const std::string& source);

// datasets' json loader: JSON lines, an array of records, an object holding them (under `field` when not
// empty) or a dict of equal-length lists.
parquet::Table read_json_table(std::string_view text, const std::string& source, const std::string& field);

// datasets' text loader: one row per line in column "text".
parquet::Table read_text_table(std::string_view text, const std::string& source, bool keep_linebreaks);

// Makes a column's cells one type where pyarrow would: Int and Double mix as Double, lists unify their
// elements, structs take the union of their keys (first-seen order, missing ones Null). Cells of kinds
// pyarrow cannot unify (an int beside a string) are left as they are.
void unify_column(std::vector<parquet::Value>& column);

// Throws "source: line L: invalid UTF-8 ..." when `text` is not UTF-8 (Python's strict decoder refuses it).
void check_utf8(std::string_view text, const std::string& source);

}  // namespace ct::data

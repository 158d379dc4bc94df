// A split of a dataset as named columns of cells, whatever file it came from: the loaders `datasets` picks by
// file extension (csv, json / jsonl, text, parquet), with their typing rules, so the example-script commands
// take a task's columns from --train_file or a Hub dataset alike. Cells are parquet::Value (null, bool, int,
// double, string, list, struct), the shape a Parquet row already has; HF features (ClassLabel names, Value
// dtypes) come along when the source records them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "parquet/hf_features.h"
#include "parquet/parquet_file.h"

namespace ct::data {

struct DatasetTable {
  parquet::Table table;                      // names, columns[k][row], num_rows
  std::optional<parquet::Feature> features;  // a Struct of the top-level features, when the source has them
  std::string source;                        // what errors name ("train.csv", "nyu-mll/glue mrpc train")
  // What pins the rows where the source has revisions (a Hub split: "repo@commit config split files"), for
  // feature cache keys; empty for local files, which those keys take by content.
  std::string fingerprint;

  int64_t num_rows() const { return table.num_rows; }
  // Column `name`; throws naming the column, `source` and the columns there are when absent.
  const std::vector<parquet::Value>& column(const std::string& name) const;
  bool has_column(const std::string& name) const { return table.find(name) >= 0; }
  // ClassLabel names of column `name` (a ClassLabel, or a List/Sequence of ClassLabel); empty when the
  // features do not say.
  std::vector<std::string> class_names(const std::string& name) const;
  // Keeps the first n rows (n < 0: all), as select(range(n)).
  void keep_first(int64_t n);
};

// The loader `datasets` uses for a file extension: "csv" (.csv, .tsv is not csv: refused), "json" (.json,
// .jsonl), "text" (.txt), "parquet" (.parquet). Throws naming `flag` and the path otherwise.
std::string loader_for(const std::string& path, const std::string& flag);

struct TableReadOptions {
  std::vector<std::string> columns;  // only these (empty: all); a missing one is an error naming it
  bool keep_linebreaks = false;      // text loader: keep each line's "\n" (run_mlm's --keep_linebreaks)
  std::string field;                 // json loader: the key holding the records (datasets' `field=`)
};

// Reads `paths` (one split's files, the same loader for all) as load_dataset(loader, data_files=paths) does
// and concatenates their rows in order. `flag` (e.g. "--train_file") starts every error, with the file and
// the line, record or row group. Loader rules:
//   csv: pandas.read_csv defaults: a header row, RFC 4180 quoting; a column whose every non-empty cell parses
//     as an integer is Int, else as a number Double, else String ("True"/"False" columns Bool); empty cells
//     are Null (NaN), so an int column with an empty cell becomes Double as pandas makes it. pandas' other NA
//     strings ("NA", "None", "null", ...) are Null too; a short row is padded with Null, a long one is an
//     error.
//   json: JSON lines (one object per line), or a whole-file array of objects, or an object whose `field` (or,
//     without one, whose only member) holds the array; or a dict of equal-length lists (columns). Columns
//     in first-seen key order, missing keys Null, nested lists and objects as List and Struct. A whole object
//     on the first non-blank line means JSON lines (pyarrow's reader goes first), even a one-line dict of
//     lists.
//   text: one String column "text", one row per line (trailing "\r\n" / "\n" dropped unless keep_linebreaks).
//   parquet: parquet::ParquetFile::read, features from the footer's "huggingface" metadata.
DatasetTable read_table_files(const std::vector<std::string>& paths, const std::string& flag,
                              const TableReadOptions& options = {});

}  // namespace ct::data

// One split's files into one table, as load_dataset(loader, data_files=...) builds a split: every file read
// by the loader its extension picks, the requested columns kept, the files' rows concatenated in order under
// the first file's column order (datasets casts every later file to the first one's schema, so their column
// sets must agree). Parquet files bring their HF features; the text formats have none to bring.
#include "data/dataset_table.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "core/fs.h"
#include "data/table_loaders.h"

namespace ct::data {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string lower_extension(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// Keeps `columns` (in that order) of `t`, read from `source`; a missing one is named with those there are.
void select_columns(parquet::Table& t, const std::vector<std::string>& columns, const std::string& source) {
  if (columns.empty()) return;
  parquet::Table out;
  out.num_rows = t.num_rows;
  for (const auto& name : columns) {
    if (out.find(name) >= 0) continue;
    const int k = t.find(name);
    if (k < 0)
      fail(source.empty() ? "table" : source, ": no column '", name, "' (columns: ", join(t.names), ")");
    out.names.push_back(name);
    out.columns.push_back(std::move(t.columns[k]));
  }
  t = std::move(out);
}

parquet::Feature select_features(const parquet::Feature& all, const std::vector<std::string>& names) {
  parquet::Feature f;
  f.kind = parquet::Feature::Kind::Struct;
  for (const auto& name : names)
    if (const parquet::Feature* c = all.field(name)) {
      f.keys.push_back(name);
      f.children.push_back(*c);
    }
  return f;
}

DatasetTable read_parquet(const std::string& path, const TableReadOptions& options) {
  const auto file = parquet::ParquetFile::open(path);
  DatasetTable out;
  // Checked here rather than by read() so that the message is the same for every loader.
  if (!options.columns.empty()) {
    parquet::Table names_only;
    names_only.names = file->column_names();
    for (const auto& name : options.columns)
      if (names_only.find(name) < 0)
        fail(path, ": no column '", name, "' (columns: ", join(names_only.names), ")");
  }
  out.table = file->read(options.columns);
  select_columns(out.table, options.columns, path);
  const std::string hf = file->key_value("huggingface");
  if (!hf.empty()) out.features = select_features(parquet::parse_hf_features(hf, path), out.table.names);
  return out;
}

DatasetTable read_one(const std::string& path, const std::string& loader, const TableReadOptions& options) {
  if (loader == "parquet") return read_parquet(path, options);
  const std::string text = fs::read_file(path);
  DatasetTable out;
  if (loader == "csv") {
    out.table = read_csv_table(text, path);
  } else if (loader == "json") {
    out.table = read_json_table(text, path, options.field);
  } else {
    out.table = read_text_table(text, path, options.keep_linebreaks);
  }
  select_columns(out.table, options.columns, path);
  return out;
}

// Appends `next` (read from `source`) to `acc`, in `acc`'s column order.
void append(parquet::Table& acc, parquet::Table&& next, const std::string& first, const std::string& source) {
  std::vector<std::string> a = acc.names, b = next.names;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a != b)
    fail(source, ": columns (", join(next.names), ") differ from ", first, "'s (", join(acc.names),
         "); the files of one split need the same columns");
  for (size_t k = 0; k < acc.names.size(); ++k) {
    auto& dst = acc.columns[k];
    auto& src = next.columns[next.find(acc.names[k])];
    dst.insert(dst.end(), std::make_move_iterator(src.begin()), std::make_move_iterator(src.end()));
  }
  acc.num_rows += next.num_rows;
}

}  // namespace

const std::vector<parquet::Value>& DatasetTable::column(const std::string& name) const {
  const int k = table.find(name);
  if (k < 0)
    fail(source.empty() ? "table" : source, ": no column '", name, "' (columns: ", join(table.names), ")");
  return table.columns[k];
}

std::vector<std::string> DatasetTable::class_names(const std::string& name) const {
  if (!features) return {};
  const parquet::Feature* f = features->field(name);
  if (!f) return {};
  if (f->kind == parquet::Feature::Kind::List && !f->children.empty()) f = &f->children[0];
  if (f->kind != parquet::Feature::Kind::ClassLabel) return {};
  return f->names;
}

void DatasetTable::keep_first(int64_t n) {
  if (n < 0 || n >= table.num_rows) return;
  for (auto& c : table.columns) c.resize(static_cast<size_t>(n));
  table.num_rows = n;
}

std::string loader_for(const std::string& path, const std::string& flag) {
  const std::string ext = lower_extension(path);
  if (ext == ".csv") return "csv";
  if (ext == ".json" || ext == ".jsonl") return "json";
  if (ext == ".txt") return "text";
  if (ext == ".parquet") return "parquet";
  const std::string prefix = flag.empty() ? path : flag + " " + path;
  if (ext == ".tsv")
    fail(prefix,
         ": a .tsv file is tab-separated, and the csv loader would split it on commas; expected a .csv, ",
         ".json, .jsonl, .txt or .parquet file");
  fail(prefix, ": unsupported extension '", ext.empty() ? std::string("(none)") : ext,
       "'; expected a .csv, .json, .jsonl, .txt or .parquet file");
}

DatasetTable read_table_files(const std::vector<std::string>& paths, const std::string& flag,
                              const TableReadOptions& options) {
  const std::string prefix = flag.empty() ? "" : flag + " ";
  if (paths.empty()) fail(flag.empty() ? "read_table_files" : flag, ": no files given");
  const std::string loader = loader_for(paths[0], flag);
  DatasetTable out;
  for (size_t k = 0; k < paths.size(); ++k) {
    const std::string& path = paths[k];
    const std::string this_loader = loader_for(path, flag);
    try {
      if (this_loader != loader)
        fail(path, ": a ", this_loader, " file among ", loader, " files (", paths[0],
             "); the files of one split share one format");
      DatasetTable one = read_one(path, loader, options);
      if (k == 0) {
        out = std::move(one);
      } else {
        append(out.table, std::move(one.table), paths[0], path);
      }
    } catch (const Error& e) {
      throw Error(prefix + e.what());
    }
  }
  // Files typed apart (an int column here, a float one there) meet in one type, as one Arrow column needs.
  if (paths.size() > 1)
    for (auto& c : out.table.columns) unify_column(c);
  out.source = paths.size() == 1 ? paths[0] : str(paths[0], " (+", paths.size() - 1, " more files)");
  return out;
}

}  // namespace ct::data

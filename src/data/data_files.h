// Which files of a dataset repo make each split, as `datasets` decides (data_files.py, utils/metadata.py):
// the card's `configs` (data_files as a string, a list, split -> path(s), with data_dir and default: true),
// else the default patterns (data/{split}-NNNNN-of-NNNNN*.*, then split keywords in folder and file names,
// else everything is train). Patterns are fsspec globs: '*' stays within a folder, '**' spans folders.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ct::data {

// split name -> repo paths, in the order datasets lists splits.
using SplitFiles = std::vector<std::pair<std::string, std::vector<std::string>>>;

// fsspec-style glob match of a '/'-separated path: '*' and '?' within one component, '**' any number of
// components, [abc] / [!abc] / [a-z] classes.
bool glob_match(const std::string& pattern, const std::string& path);

// The files a README `configs` entry's data_files selects from `files` (with the entry's data_dir, if any).
// Throws naming the config when a pattern matches nothing, unless `partial` (a cached snapshot holding only
// some files: splits without files are then left out).
SplitFiles files_of_config(const nlohmann::ordered_json& config, const std::vector<std::string>& files,
                           const std::string& where, bool partial = false);

// The `configs` entry for `name` ("" = the default: the only one, the one named "default", or the one with
// default: true). Throws listing the available names otherwise.
const nlohmann::ordered_json& select_config(const nlohmann::ordered_json& configs, const std::string& name,
                                            const std::string& where);

// datasets' default patterns over the repo's data files (by extension); empty when none.
SplitFiles default_split_files(const std::vector<std::string>& files);

// True for files datasets would read as data: parquet, arrow, csv, tsv, json, jsonl, txt (not hidden, not in
// hidden folders).
bool is_data_file(const std::string& path);

}  // namespace ct::data

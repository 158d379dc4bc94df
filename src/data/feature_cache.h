// Features built once and reused, as datasets' map cache files are: binary files of our own, named by a key
// that hashes everything shaping the features (the caller's business: the data, the tokenizer, the flags).
// Here the task commands' FeatureColumns (magic "CTFCOLS": named columns of int32 rows); a task with features
// of another shape writes its own form through data/feature_cache_file.h (qa's FeatureSet, magic "CTFEAT":
// tasks/question_answering/qa_feature_cache.h). Which rank builds and which reads is
// train/node_feature_cache.h's business. Cache folder: data/datasets_cache.h's root, under
// coretrain-features/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "text/hf_tokenizer.h"
#include "text/tokenizer.h"

namespace ct::data {

// Identity of a tokenizer for cache keys: vocab, added tokens, normalizer options.
uint64_t tokenizer_fingerprint(const text::Tokenizer& tokenizer);
// The same for a tokenizer.json pipeline: the tokenizer.json and tokenizer_config.json it was read with.
uint64_t tokenizer_fingerprint(const text::HfTokenizer& tokenizer);
// The folder feature caches live in (see above; `cache_dir` is the scripts' --cache_dir, "" for none);
// created on first write.
std::string feature_cache_dir(const std::string& cache_dir = {});
// "<16 hex digits>.bin": a cache file's name for `key`.
std::string feature_cache_file_name(uint64_t key);

// A task's tokenized split as the cache holds it: named columns, each with one int32 row per feature or
// example (input_ids, token_type_ids, per-token labels, ...). Each task converts its own feature struct to
// and from it, so one file format serves them all.
struct FeatureColumns {
  std::vector<std::string> names;
  std::vector<std::vector<std::vector<int32_t>>> columns;  // columns[k][row]

  void add(std::string name, std::vector<std::vector<int32_t>> rows);
  // Moves column `name` out; throws naming `path` when the file has no such column.
  std::vector<std::vector<int32_t>> take(const std::string& name, const std::string& path);
};

// Writes atomically (temp file + rename); throws naming the path on I/O errors. load: nullopt when the file
// does not exist; throws naming the path when it exists but is not a valid cache file (bad magic/version,
// truncated, checksum).
void save_feature_columns(const std::string& path, const FeatureColumns& columns);
std::optional<FeatureColumns> load_feature_columns(const std::string& path);

}  // namespace ct::data

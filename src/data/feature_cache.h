// Features built once and reused, as datasets' map cache files are: binary files of our own, named by a key
// that hashes everything shaping the features (the caller's business: the data, the tokenizer, the flags).
// Two shapes: qa's FeatureSet (magic "CTFEAT": the build options, every tokenized example and feature
// window) and the task commands' FeatureColumns (magic "CTFCOLS": named columns of int32 rows). Which rank
// builds and which reads is train/node_feature_cache.h's business. Cache folder: --cache_dir, else
// HF_DATASETS_CACHE, else $HF_HOME/datasets, else ~/.cache/huggingface/datasets, under coretrain-features/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/features.h"
#include "text/hf_tokenizer.h"
#include "text/tokenizer.h"

namespace ct::data {

// Identity of a tokenizer for cache keys: vocab, added tokens, normalizer options.
uint64_t tokenizer_fingerprint(const text::Tokenizer& tokenizer);
// The same for a tokenizer.json pipeline: the tokenizer.json and tokenizer_config.json it was read with.
uint64_t tokenizer_fingerprint(const text::HfTokenizer& tokenizer);
// Identity of the features: every example's token ids and offsets and every window and label.
uint64_t feature_set_hash(const FeatureSet& features);

// The folder feature caches live in (see above; `cache_dir` is the scripts' --cache_dir, "" for none);
// created on first write.
std::string feature_cache_dir(const std::string& cache_dir = {});
// "<16 hex digits>.bin": a cache file's name for `key`.
std::string feature_cache_file_name(uint64_t key);

// Writes atomically (temp file + rename). Throws naming the path on I/O errors.
void save_feature_set(const std::string& path, const FeatureSet& features);
// nullopt when the file does not exist; throws naming the path when it exists but is not a valid cache file
// (bad magic/version, truncated).
std::optional<FeatureSet> load_feature_set(const std::string& path);

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

// The same contract as save_feature_set / load_feature_set.
void save_feature_columns(const std::string& path, const FeatureColumns& columns);
std::optional<FeatureColumns> load_feature_columns(const std::string& path);

}  // namespace ct::data

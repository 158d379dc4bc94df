// The task commands' feature cache (train/node_feature_cache.h: one rank per node tokenizes, later runs
// tokenize nothing), keyed as datasets keys a map's cache file by the data and the transform: the split's
// pinned source (a Hub split's repo, commit, config, split and files), the tokenizer (its tokenizer.json and
// tokenizer_config.json as read, with the script's overrides), the flags that shape the features
// (max_seq_length, label_all_tokens, line_by_line, ...) and the tokenizer's exact inputs (every text, word
// and label id that goes in). The inputs stand for a local file's content and for whatever the script did to
// the rows first (max_*_samples, --shuffle_train_dataset, --remove_columns, --text_column_delimiter, the
// checkpoint's label order), so no flag can be forgotten from the key. The files hold data::FeatureColumns;
// each task converts its feature struct to and from them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/hash.h"
#include "data/dataset_table.h"
#include "data/feature_cache.h"
#include "text/hf_tokenizer.h"
#include "train/dist_context.h"
#include "train/node_feature_cache.h"

namespace ct::tasks {

// What every split of a run shares.
struct FeatureCache {
  const train::DistContext* dist = nullptr;
  std::string cache_dir;   // --cache_dir
  bool overwrite = false;  // --overwrite_cache
  uint64_t tokenizer = 0;  // data::tokenizer_fingerprint
};

FeatureCache make_feature_cache(const text::HfTokenizer& tokenizer, const std::string& cache_dir,
                                bool overwrite_cache, const train::DistContext& dist);

// One split's place in the cache: the run's cache (null: no cache, every call tokenizes) and the split.
struct SplitCache {
  const FeatureCache* cache = nullptr;
  std::string what;    // the split in the log (the table's source)
  std::string source;  // the table's fingerprint
};

SplitCache split_cache(const FeatureCache* cache, const data::DatasetTable& table);

// A key's start: the format (`kind`, e.g. "sequence-v1": bump it when a builder's output changes), the
// split's source and the tokenizer. The caller adds its flags and inputs.
Hasher feature_key(const SplitCache& split, const std::string& kind);

// `build()` unless the split's cache file for `key` exists; `to` and `from` convert to and from the file's
// columns (`from` may throw naming the path when a column is missing or inconsistent).
template <class T>
T cached_features(const SplitCache& split, uint64_t key, const std::function<T()>& build,
                  const std::function<data::FeatureColumns(const T&)>& to,
                  const std::function<T(data::FeatureColumns, const std::string&)>& from,
                  const std::function<int64_t(const T&)>& size) {
  if (!split.cache) return build();
  train::FeatureCacheRequest req;
  req.what = split.what;
  req.key = key;
  req.cache_dir = split.cache->cache_dir;
  req.overwrite = split.cache->overwrite;
  return train::node_cached_features<T>(
      req, *split.cache->dist, build,
      [&](const std::string& path, const T& v) { data::save_feature_columns(path, to(v)); },
      [&](const std::string& path) -> std::optional<T> {
        auto c = data::load_feature_columns(path);
        if (!c) return std::nullopt;
        return from(std::move(*c), path);
      },
      size);
}

// Rows of one column, checked to number `n` (a cache file's columns must agree).
std::vector<std::vector<int32_t>> take_rows(data::FeatureColumns& c, const std::string& name, size_t n,
                                            const std::string& path);
// Fails naming `path` unless every row of `b` (column `name`) is as long as the same row of `a`.
void check_row_lengths(const std::vector<std::vector<int32_t>>& a, const std::vector<std::vector<int32_t>>& b,
                       const std::string& name, const std::string& path);

}  // namespace ct::tasks

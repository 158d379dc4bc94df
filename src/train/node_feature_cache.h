// Features built once per node and reused by later runs, as the scripts' `main_process_first` around
// `dataset.map` does with datasets' cache files: local rank 0 reads the cache file named by the key, or
// builds the features and writes the file (atomically), while the node's other ranks wait, then read the
// file. A run that finds the file tokenizes nothing. --overwrite_cache rebuilds (and rewrites) it. A damaged
// file is logged and rebuilt; a cache that cannot be written is logged and every rank builds its own. A build
// that fails on the building rank fails every rank with its message. Used by qa and every task command (each
// brings its own key and file format: data/feature_cache.h). Collective.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "train/dist_context.h"

namespace ct::train {

struct FeatureCacheRequest {
  std::string what;        // names the split in the log ("--train_file train.csv", "nyu-mll/glue mrpc train")
  uint64_t key = 0;        // everything that shapes the features, hashed (the file name)
  std::string cache_dir;   // the scripts' --cache_dir ("" = the datasets cache's environment rules)
  bool overwrite = false;  // --overwrite_cache
};

// The type-erased steps of node_cached_features: `load` reads the file into the caller's value (false when
// it does not exist; throws when it is damaged), `build` builds it, `save` writes it, `size` counts it for
// the log.
struct FeatureCacheSteps {
  std::function<bool(const std::string& path)> load;
  std::function<void()> build;
  std::function<void(const std::string& path)> save;
  std::function<int64_t()> size;
};

// Returns whether this rank's features came from the cache file.
bool run_node_feature_cache(const FeatureCacheRequest& request, const DistContext& dist,
                            const FeatureCacheSteps& steps);

// The features for `request`: from the node's cache file, else `build()` (then written with `save`).
template <class T>
T node_cached_features(const FeatureCacheRequest& request, const DistContext& dist,
                       const std::function<T()>& build,
                       const std::function<void(const std::string&, const T&)>& save,
                       const std::function<std::optional<T>(const std::string&)>& load,
                       const std::function<int64_t(const T&)>& size) {
  std::optional<T> value;
  FeatureCacheSteps steps;
  steps.load = [&](const std::string& path) {
    value = load(path);
    return value.has_value();
  };
  steps.build = [&] { value = build(); };
  steps.save = [&](const std::string& path) { save(path, *value); };
  steps.size = [&] { return size(*value); };
  run_node_feature_cache(request, dist, steps);
  return std::move(*value);
}

}  // namespace ct::train

#include "train/node_feature_cache.h"

#include <chrono>

#include "core/error.h"
#include "core/log.h"
#include "data/feature_cache.h"

namespace ct::train {

bool run_node_feature_cache(const FeatureCacheRequest& req, const DistContext& dist,
                            const FeatureCacheSteps& steps) {
  const std::string path =
      data::feature_cache_dir(req.cache_dir) + "/" + data::feature_cache_file_name(req.key);
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  bool from_cache = false;
  std::string err;
  if (dist.local_rank == 0) {
    try {
      if (!req.overwrite) {
        try {
          from_cache = steps.load(path);
        } catch (const Error& e) {
          log::warn(e.what(), "; rebuilding it");
        }
      }
      if (from_cache) {
        log::info(req.what, ": ", steps.size(), " features from the cache ", path, " in ", elapsed(), " s");
      } else {
        steps.build();
        log::info(req.what, ": built ", steps.size(), " features in ", elapsed(), " s");
        try {
          steps.save(path);
        } catch (const Error& e) {
          log::warn("feature cache not written (", e.what(), "); other ranks build their own");
        }
      }
    } catch (const Error& e) {
      err = e.what();
    }
  }
  // A collective where a barrier would do: the node's other ranks wait for the file, and every rank learns of
  // a build that failed instead of waiting for features that never come.
  const auto errs = allgather_strings(dist, err);
  for (size_t r = 0; r < errs.size(); ++r)
    if (!errs[r].empty())
      fail(errs[r], static_cast<int>(r) == dist.rank ? std::string() : str(" (on rank ", r, ")"));
  if (dist.local_rank != 0) {
    try {
      from_cache = steps.load(path);
    } catch (const Error& e) {
      log::warn(e.what());
    }
    if (!from_cache) {
      log::warn(req.what, ": no usable feature cache file from local rank 0 (", path,
                "); building the features on this rank");
      steps.build();
    }
  }
  return from_cache;
}

}  // namespace ct::train

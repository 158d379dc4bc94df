#include "tasks/cached_features.h"

#include "core/error.h"

namespace ct::tasks {

FeatureCache make_feature_cache(const text::HfTokenizer& tokenizer, const std::string& cache_dir,
                                bool overwrite_cache, const train::DistContext& dist) {
  FeatureCache c;
  c.dist = &dist;
  c.cache_dir = cache_dir;
  c.overwrite = overwrite_cache;
  c.tokenizer = data::tokenizer_fingerprint(tokenizer);
  return c;
}

SplitCache split_cache(const FeatureCache* cache, const data::DatasetTable& table) {
  SplitCache s;
  s.cache = cache;
  s.what = table.source;
  s.source = table.fingerprint;
  return s;
}

Hasher feature_key(const SplitCache& split, const std::string& kind) {
  Hasher h;
  h.str("coretrain task features").str(kind).str(split.source);
  h.u64(split.cache ? split.cache->tokenizer : 0);
  return h;
}

std::vector<std::vector<int32_t>> take_rows(data::FeatureColumns& c, const std::string& name, size_t n,
                                            const std::string& path) {
  auto rows = c.take(name, path);
  if (rows.size() != n)
    fail(path, ": corrupt feature cache (column '", name, "' has ", rows.size(), " rows, expected ", n, ")");
  return rows;
}

void check_row_lengths(const std::vector<std::vector<int32_t>>& a, const std::vector<std::vector<int32_t>>& b,
                       const std::string& name, const std::string& path) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i].size() != b[i].size())
      fail(path, ": corrupt feature cache (row ", i, " of '", name, "' has ", b[i].size(), " values for ",
           a[i].size(), " tokens)");
}

}  // namespace ct::tasks

// qa's features in the feature cache (data/feature_cache.h): a FeatureSet's own file form (magic "CTFEAT":
// the build options, every tokenized example and feature window), and the hash ranks compare to know they
// built the same features.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tasks/question_answering/qa_features.h"

namespace ct::tasks {

// Identity of the features: every example's token ids and offsets and every window and label.
uint64_t feature_set_hash(const FeatureSet& features);

// Writes atomically (temp file + rename). Throws naming the path on I/O errors.
void save_feature_set(const std::string& path, const FeatureSet& features);
// nullopt when the file does not exist; throws naming the path when it exists but is not a valid cache file
// (bad magic/version, truncated).
std::optional<FeatureSet> load_feature_set(const std::string& path);

}  // namespace ct::tasks

// The datasets library's cache root, where coretrain keeps what it derives from datasets (feature caches, the
// legacy SQuAD JSON files): --cache_dir, else HF_DATASETS_CACHE, else $HF_HOME/datasets, else
// $XDG_CACHE_HOME/huggingface/datasets, else ~/.cache/huggingface/datasets ("~/" expanded).
#pragma once

#include <string>

namespace ct::data {

// `cache_dir` is the scripts' --cache_dir flag ("" when not given).
std::string datasets_cache_dir(const std::string& cache_dir);

}  // namespace ct::data

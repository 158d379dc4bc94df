// --dataset_name resolved as datasets.load_dataset does, without Python: a Hub dataset repo (or a legacy
// short name through dataset_aliases.cpp's table, or a local folder laid out like a repo), its README
// `configs` or the default split patterns (data_files.h), else the Parquet conversion on the
// refs/convert/parquet branch when the main branch holds only a loading script. Every file of a run is taken
// at one commit, through the Hub client into huggingface_hub's cache (datasets--org--name), so Python and
// coretrain share downloads; HF_HUB_OFFLINE / HF_DATASETS_OFFLINE read the cached snapshot.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "data/data_files.h"
#include "parquet/hf_features.h"

namespace ct::data {

struct DatasetRequest {
  std::string name;             // --dataset_name
  std::string config;           // --dataset_config_name ("" = the default config)
  std::string revision;         // --dataset_revision ("" = main)
  std::string cache_dir;        // --cache_dir ("" = the hub cache's environment rules)
  std::string token;            // --token ("" = HF_TOKEN & co.)
  std::string endpoint;         // "" = HF_ENDPOINT, else https://huggingface.co
  std::optional<bool> offline;  // unset: HF_DATASETS_OFFLINE, else HF_HUB_OFFLINE
};

struct ResolvedDataset {
  std::string repo_id;  // the Hub repo, or the local folder
  bool local = false;
  std::string revision;  // the revision files came from (main, the given one, or refs/convert/parquet)
  std::string commit;    // pinned commit ("" for a local folder)
  std::string config;    // the config chosen ("default" when the repo has none)
  SplitFiles splits;     // split -> repo paths (local: paths under the folder)
  std::optional<parquet::Feature> card_features;  // the card's dataset_info features for the config, if any

  // The repo paths of `split`; throws listing the splits when absent.
  const std::vector<std::string>& split(const std::string& name) const;
  std::vector<std::string> split_names() const;
};

// The Hub repo id for a legacy short name (glue -> nyu-mll/glue, ...); `name` itself when it has a '/' or is
// not in the table.
std::string dataset_repo_id(const std::string& name);

// Resolves which files make each split (fetching README.md and the file list, not the data).
ResolvedDataset resolve_dataset(const DatasetRequest& req);

// Local paths of `split`'s files: downloaded into the cache at the pinned commit (or the folder's own files).
std::vector<std::string> fetch_split(const DatasetRequest& req, const ResolvedDataset& ds,
                                     const std::string& split);

// HF features of a split's Parquet file: its footer's "huggingface" metadata, else the card's dataset_info
// (ClassLabel names live only there for files written without datasets); nullopt when neither has them.
std::optional<parquet::Feature> dataset_features(const ResolvedDataset& ds, const std::string& parquet_path);

// HF_DATASETS_OFFLINE when set (it overrides), else HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE.
bool datasets_offline_env();

}  // namespace ct::data

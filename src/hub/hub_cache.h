// huggingface_hub's cache, shared with Python (transformers, datasets, huggingface-cli): the cache root from
// the environment and one repo's folder in it (design reference §7):
//   <root>/models--org--name/blobs/<etag>                   file contents, named by their etag
//                            refs/<revision>                the commit hash the revision pointed to
//                            snapshots/<commit>/<path>      relative symlink -> ../../blobs/<etag>
//                            .no_exist/<commit>/<path>      empty: the file is known to be absent there
//   <root>/.locks/models--org--name/<etag>.lock            flock'ed while one process downloads the blob
#pragma once

#include <optional>
#include <string>

#include "hub/hub_url.h"

namespace ct::hub {

// The cache root. `cache_dir` (the --cache_dir flag) wins; then, when `transformers_env` (model loading, as
// transformers v4 does), TRANSFORMERS_CACHE, PYTORCH_TRANSFORMERS_CACHE, PYTORCH_PRETRAINED_BERT_CACHE (with
// transformers' deprecation note, logged once); then HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE, $HF_HOME/hub, with
// HF_HOME defaulting to $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface. A leading "~/" is expanded.
std::string hub_cache_dir(const std::string& cache_dir = "", bool transformers_env = true);

// $HF_HOME (or its default), for the token file.
std::string hf_home();

// HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE set to 1/true/yes/on (any case).
bool offline_from_env();

class RepoCache {
 public:
  RepoCache(std::string root, RepoType type, std::string repo_id);

  const std::string& root() const { return root_; }
  std::string repo_dir() const { return root_ + "/" + folder_; }
  std::string blob_path(const std::string& etag) const { return repo_dir() + "/blobs/" + etag; }
  std::string incomplete_path(const std::string& etag) const { return blob_path(etag) + ".incomplete"; }
  std::string ref_path(const std::string& revision) const { return repo_dir() + "/refs/" + revision; }
  std::string snapshot_path(const std::string& commit, const std::string& filename) const {
    return repo_dir() + "/snapshots/" + commit + "/" + filename;
  }
  std::string snapshot_dir(const std::string& commit) const { return repo_dir() + "/snapshots/" + commit; }
  std::string no_exist_path(const std::string& commit, const std::string& filename) const {
    return repo_dir() + "/.no_exist/" + commit + "/" + filename;
  }
  std::string lock_path(const std::string& etag) const {
    return root_ + "/.locks/" + folder_ + "/" + etag + ".lock";
  }

  // The commit a revision names: itself when it is a commit hash, else refs/<revision> (nullopt if absent).
  std::optional<std::string> commit_of(const std::string& revision) const;
  // refs/<revision> := commit, atomically, only when it changes (no-op for a commit-hash revision).
  void write_ref(const std::string& revision, const std::string& commit) const;
  // The cached file of `revision` (through refs/), nullopt when not in the cache.
  std::optional<std::string> cached_file(const std::string& revision, const std::string& filename) const;
  // True when .no_exist marks `filename` as absent at the revision's commit.
  bool known_missing(const std::string& revision, const std::string& filename) const;
  void mark_missing(const std::string& commit, const std::string& filename) const;
  // snapshots/<commit>/<filename> -> ../../blobs/<etag> (one more ../ per folder in filename), replacing any
  // previous link; returns the snapshot path.
  std::string link_snapshot(const std::string& commit, const std::string& filename,
                            const std::string& etag) const;

 private:
  std::string root_;
  std::string folder_;
};

}  // namespace ct::hub

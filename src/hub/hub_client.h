// Files of Hub repos as local paths, the way huggingface_hub's hf_hub_download does it, sharing its cache
// (hub_cache.h): HEAD the resolve URL for the commit, etag and size (following relative redirects of renamed
// repos; an LFS file's absolute redirect is where the GET goes, without the token if that is another host),
// GET into blobs/<etag>.incomplete resuming with Range, check the size, fsync and rename into blobs/, link
// snapshots/<commit>/<file>. One process per blob downloads while the others wait on its lock file (ranks of
// a node, pods on one volume). Retries with backoff on 408/429/5xx and dropped connections; when the Hub
// cannot be reached the cached file of the revision is used. HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE: the cache
// only, no request at all.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "hub/hub_cache.h"
#include "hub/hub_url.h"

namespace ct::hub {

enum class HubErrorCode {
  repo_not_found,
  gated_repo,
  revision_not_found,
  entry_not_found,
  not_cached,  // offline (or unreachable Hub) and the file is not in the cache
  http,        // any other failure
};

class HubError : public Error {
 public:
  HubError(HubErrorCode code, const std::string& what) : Error(what), code_(code) {}
  HubErrorCode code() const { return code_; }

 private:
  HubErrorCode code_;
};

struct HubOptions {
  std::string endpoint;          // "": HF_ENDPOINT, else https://huggingface.co
  std::string cache_dir;         // "": hub_cache_dir()'s environment rules
  bool transformers_env = true;  // TRANSFORMERS_CACHE & co. count (model files; not datasets)
  std::string token;             // "": HF_TOKEN, HUGGING_FACE_HUB_TOKEN, $HF_HOME/token
  std::optional<bool> offline;   // unset: HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE
  double etag_timeout = -1;      // < 0: HF_HUB_ETAG_TIMEOUT, else 10 s
  double download_timeout = -1;  // < 0: HF_HUB_DOWNLOAD_TIMEOUT, else 10 s
  int max_retries = 5;
  double retry_wait = 1;           // first backoff in seconds; doubles, at most 8
  double lock_stall_timeout = -1;  // < 0: CORETRAIN_HUB_LOCK_TIMEOUT, else 600 s without progress
  bool progress = true;            // progress bar / log lines
};

struct FileRef {
  RepoType type = RepoType::model;
  std::string repo_id;
  std::string revision = "main";
  std::string filename;
};

// A revision's files as the Hub lists them (the API's siblings), pinned to one commit.
struct RepoFiles {
  std::string commit;
  std::vector<std::string> files;  // paths in the repo, '/'-separated
  bool from_cache = false;         // offline / Hub unreachable: the cached snapshot's files only
};

class HubClient {
 public:
  explicit HubClient(HubOptions options = {});

  // Local path of the file (a path under snapshots/<commit>/). Throws HubError naming the repo, file and
  // revision and what to do.
  std::string resolve(const FileRef& ref);
  // The same, but nullopt when the file does not exist in the repo (EntryNotFound, or a .no_exist marker).
  std::optional<std::string> resolve_optional(const FileRef& ref);

  // GET {endpoint}/api/{models|datasets}/{repo}/revision/{revision} (hub_repo_files.cpp); records
  // refs/<revision> in the cache. Offline, or when the Hub cannot be reached: the files of the cached
  // snapshot that refs/<revision> names. Throws HubError as resolve() does.
  RepoFiles list_files(RepoType type, const std::string& repo_id, const std::string& revision);

  const std::string& cache_root() const { return root_; }
  const std::string& endpoint() const { return endpoint_; }
  bool offline() const { return offline_; }
  bool has_token() const { return !token_.empty(); }
  RepoCache cache_of(const FileRef& ref) const { return RepoCache(root_, ref.type, ref.repo_id); }

 private:
  struct Metadata {
    std::string commit, etag, location;
    int64_t size = -1;
  };
  std::optional<std::string> resolve_impl(const FileRef& ref, bool optional);
  Metadata head(const FileRef& ref);
  void download(const FileRef& ref, const RepoCache& cache, const Metadata& meta);
  void fetch_blob(const FileRef& ref, const RepoCache& cache, const Metadata& meta);
  [[noreturn]] void raise(const FileRef& ref, long status, const std::string& error_code,
                          const std::string& message, const std::string& url) const;
  std::string describe(const FileRef& ref) const;

  HubOptions opt_;
  std::string endpoint_, root_, token_;
  bool offline_ = false;
};

// The token resolve() sends: `explicit_token` when not empty, else HF_TOKEN, HUGGING_FACE_HUB_TOKEN, the
// first line of $HF_HOME/token; "" when none.
std::string find_token(const std::string& explicit_token = "");

}  // namespace ct::hub

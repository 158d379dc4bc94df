// HubClient::list_files: the revision endpoint's file list (huggingface_hub's dataset_info / model_info with
// siblings), so dataset resolution can glob data_files patterns against the repo as `datasets` does.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "hub/hub_client.h"
#include "hub/hub_http.h"

namespace ct::hub {

namespace {

RepoFiles from_snapshot(const RepoCache& cache, const std::string& revision, const std::string& repo_id,
                        const std::string& why) {
  const auto commit = cache.commit_of(revision);
  if (!commit || !std::filesystem::is_directory(cache.snapshot_dir(*commit)))
    throw HubError(HubErrorCode::not_cached,
                   str(repo_id, " at revision ", revision, " is not in the cache at ", cache.repo_dir(), " (",
                       why, "): run once online, or unset HF_HUB_OFFLINE / HF_DATASETS_OFFLINE"));
  RepoFiles out;
  out.commit = *commit;
  out.from_cache = true;
  const std::filesystem::path dir = cache.snapshot_dir(*commit);
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    // Snapshot entries are links into blobs/: name them by their place in the snapshot, not their target.
    if (e.is_regular_file()) out.files.push_back(e.path().lexically_relative(dir).generic_string());
  }
  std::sort(out.files.begin(), out.files.end());
  return out;
}

}  // namespace

RepoFiles HubClient::list_files(RepoType type, const std::string& repo_id, const std::string& revision) {
  const RepoCache cache(root_, type, repo_id);
  if (offline_) return from_snapshot(cache, revision, repo_id, "offline mode");
  const std::string url = str(endpoint_, type == RepoType::dataset ? "/api/datasets/" : "/api/models/",
                              repo_id, "/revision/", percent_encode(revision, ""));
  std::vector<std::string> headers;
  if (!token_.empty()) headers.push_back("Authorization: Bearer " + token_);
  const int fd = ::memfd_create("ct-hub-api", 0);
  CT_CHECK(fd >= 0, "memfd_create failed for ", url);
  HttpResponse r;
  std::string body;
  for (int attempt = 0;; ++attempt) {
    if (::ftruncate(fd, 0) != 0) fail("ftruncate failed for ", url);
    ::lseek(fd, 0, SEEK_SET);
    r = http_get_to_fd(url, headers, opt_.etag_timeout > 0 ? opt_.etag_timeout : 10, fd);
    const bool retry = r.status == 0 || r.status == 408 || r.status == 429 || r.status >= 500;
    if (!retry || attempt + 1 >= opt_.max_retries) break;
    ::usleep(static_cast<useconds_t>(std::min(8.0, opt_.retry_wait * (1 << attempt)) * 1e6));
  }
  if (r.status == 200) {
    const off_t n = ::lseek(fd, 0, SEEK_END);
    body.resize(static_cast<size_t>(n));
    if (n > 0 && ::pread(fd, body.data(), body.size(), 0) != n) body.clear();
  }
  ::close(fd);
  if (r.status == 0) return from_snapshot(cache, revision, repo_id, str("the Hub is unreachable: ", r.error));
  if (r.status != 200) {
    FileRef ref{type, repo_id, revision, ""};
    raise(ref, r.status, r.header("x-error-code"), r.header("x-error-message"), url);
  }
  RepoFiles out;
  try {
    const auto j = nlohmann::json::parse(body);
    out.commit = j.at("sha").get<std::string>();
    for (const auto& s : j.at("siblings")) out.files.push_back(s.at("rfilename").get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    fail(url, ": unexpected answer from the Hub (", e.what(), ")");
  }
  CT_CHECK(is_commit_hash(out.commit), url, ": the Hub's sha '", out.commit, "' is not a commit hash");
  cache.write_ref(revision, out.commit);
  std::sort(out.files.begin(), out.files.end());
  return out;
}

}  // namespace ct::hub

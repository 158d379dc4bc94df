#include "hub/hub_client.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/fs.h"
#include "core/log.h"
#include "hub/hub_http.h"
#include "hub/hub_progress.h"

namespace ct::hub {
namespace stdfs = std::filesystem;

namespace {

double env_seconds(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const double d = std::strtod(v, &end);
  if (end == v || d <= 0) fail(name, ": expected a number of seconds > 0, got '", v, "'");
  return d;
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

// ETag / X-Linked-Etag: W/"abc" -> abc.
std::string normalize_etag(std::string e) {
  e = trim(e);
  if (e.rfind("W/", 0) == 0) e = e.substr(2);
  if (e.size() >= 2 && e.front() == '"' && e.back() == '"') e = e.substr(1, e.size() - 2);
  return e;
}

bool retryable(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

double backoff(double base, int attempt) {
  return std::min(8.0, base * static_cast<double>(1 << std::min(attempt, 10)));
}

void sleep_s(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

int64_t file_size(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

// An flock held for the lifetime of the object.
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {}
  ~FileLock() {
    if (fd_ >= 0) {
      ::flock(fd_, LOCK_UN);
      ::close(fd_);
    }
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

std::string find_token(const std::string& explicit_token) {
  if (!explicit_token.empty()) return explicit_token;
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    const char* v = std::getenv(name);
    if (v && *v) return trim(v);
  }
  const std::string path = hf_home() + "/token";
  std::error_code ec;
  if (stdfs::is_regular_file(path, ec)) {
    std::string t = fs::read_file(path);
    const auto nl = t.find('\n');
    if (nl != std::string::npos) t.resize(nl);
    return trim(t);
  }
  return "";
}

HubClient::HubClient(HubOptions options) : opt_(std::move(options)) {
  endpoint_ = hub_endpoint(opt_.endpoint);
  root_ = hub_cache_dir(opt_.cache_dir, opt_.transformers_env);
  token_ = find_token(opt_.token);
  offline_ = opt_.offline ? *opt_.offline : offline_from_env();
  if (opt_.etag_timeout < 0) opt_.etag_timeout = env_seconds("HF_HUB_ETAG_TIMEOUT", 10);
  if (opt_.download_timeout < 0) opt_.download_timeout = env_seconds("HF_HUB_DOWNLOAD_TIMEOUT", 10);
  if (opt_.lock_stall_timeout < 0) opt_.lock_stall_timeout = env_seconds("CORETRAIN_HUB_LOCK_TIMEOUT", 600);
}

std::string HubClient::describe(const FileRef& ref) const {
  return str(ref.filename, " of ", ref.type == RepoType::dataset ? "dataset " : "", ref.repo_id,
             " at revision ", ref.revision);
}

std::string HubClient::resolve(const FileRef& ref) {
  return *resolve_impl(ref, /*optional=*/false);
}

std::optional<std::string> HubClient::resolve_optional(const FileRef& ref) {
  return resolve_impl(ref, /*optional=*/true);
}

std::optional<std::string> HubClient::resolve_impl(const FileRef& ref, bool optional) {
  std::string why;
  if (!looks_like_repo_id(ref.repo_id, &why))
    throw HubError(HubErrorCode::repo_not_found, str("'", ref.repo_id, "' is not a valid repo id: ", why));
  if (ref.filename.empty() || ref.revision.empty()) fail("hub: empty filename or revision for ", ref.repo_id);
  const RepoCache cache = cache_of(ref);
  // A commit hash whose file is cached needs no request; an optional file marked absent neither.
  if (is_commit_hash(ref.revision) || offline_) {
    if (auto p = cache.cached_file(ref.revision, ref.filename)) return p;
    if (optional && cache.known_missing(ref.revision, ref.filename)) return std::nullopt;
  }
  if (offline_) {
    if (optional) return std::nullopt;
    throw HubError(
        HubErrorCode::not_cached,
        str(describe(ref), " is not in the cache ", cache.repo_dir(),
            " and HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE forbids downloading it: run once online (or ",
            "unset the variable) to fill the cache"));
  }
  if (optional && cache.known_missing(ref.revision, ref.filename)) {
    // Not trusted blindly online: the revision may have moved. Still cheap: one HEAD below.
  }
  Metadata meta;
  try {
    meta = head(ref);
  } catch (const HubError& e) {
    if (e.code() == HubErrorCode::entry_not_found && optional) return std::nullopt;
    if (e.code() != HubErrorCode::http) throw;
    // The Hub could not be reached: HF's rule is to use what the cache has for the revision.
    if (auto p = cache.cached_file(ref.revision, ref.filename)) {
      log::warn(e.what(), "; using the cached ", p->c_str());
      return p;
    }
    if (optional && cache.known_missing(ref.revision, ref.filename)) return std::nullopt;
    throw HubError(HubErrorCode::not_cached, str(e.what(), "; and ", ref.filename, " is not in the cache ",
                                                 cache.repo_dir(), " either"));
  }
  cache.write_ref(ref.revision, meta.commit);
  const std::string snap = cache.snapshot_path(meta.commit, ref.filename);
  std::error_code ec;
  if (stdfs::is_regular_file(snap, ec)) return snap;
  download(ref, cache, meta);
  return cache.link_snapshot(meta.commit, ref.filename, meta.etag);
}

[[noreturn]] void HubClient::raise(const FileRef& ref, long status, const std::string& code,
                                   const std::string& message, const std::string& url) const {
  const std::string kind = ref.type == RepoType::dataset ? "dataset" : "model";
  const std::string page = str(endpoint_, ref.type == RepoType::dataset ? "/datasets/" : "/", ref.repo_id);
  const std::string said = message.empty() ? std::string() : str(" (the Hub says: ", message, ")");
  if (code == "GatedRepo")
    throw HubError(HubErrorCode::gated_repo,
                   token_.empty() ? str(kind, " repo ", ref.repo_id, " is gated (HTTP ", status,
                                        ") and no token was sent: ", "accept its terms at ", page,
                                        ", then pass --token or set HF_TOKEN")
                                  : str(kind, " repo ", ref.repo_id, " is gated (HTTP ", status,
                                        ") and the token sent has ", "no access: accept its terms at ", page,
                                        " with the token's account, or pass ", "another --token / HF_TOKEN"));
  if (code == "RepoNotFound" || (status == 401 && code.empty()))
    throw HubError(
        HubErrorCode::repo_not_found,
        str(kind, " repo ", ref.repo_id, " not found at ", endpoint_, " (HTTP ", status, "): check the name",
            token_.empty() ? "; if it is private, pass --token or set HF_TOKEN"
                           : " and that the token has access to it",
            said));
  if (code == "RevisionNotFound")
    throw HubError(HubErrorCode::revision_not_found,
                   str("revision ", ref.revision, " not found in ", kind, " repo ", ref.repo_id,
                       ": give a branch, tag or commit hash that exists at ", page, said));
  if (code == "EntryNotFound" || (status == 404 && code.empty()))
    throw HubError(HubErrorCode::entry_not_found,
                   str(ref.filename, " not found in ", kind, " repo ", ref.repo_id, " at revision ",
                       ref.revision, " (HTTP ", status, ")", said));
  throw HubError(HubErrorCode::http, str("downloading ", describe(ref), " failed: HTTP ", status,
                                         code.empty() ? "" : " " + code, " from ", url, said));
}

HubClient::Metadata HubClient::head(const FileRef& ref) {
  std::string url = resolve_url(endpoint_, ref.type, ref.repo_id, ref.revision, ref.filename);
  HttpResponse r;
  int redirects = 0;
  for (int attempt = 0;; ++attempt) {
    std::vector<std::string> headers = {"Accept-Encoding: identity"};
    if (!token_.empty() && url_origin(url) == url_origin(endpoint_))
      headers.push_back("Authorization: Bearer " + token_);
    r = http_head(url, headers, opt_.etag_timeout);
    if (r.error.empty() && r.status >= 300 && r.status < 400) {
      const std::string loc = r.header("location");
      if (!loc.empty() && url_origin(loc).empty()) {
        // A renamed repo: the same request at the new path on the same host.
        if (++redirects > 10) fail("hub: too many redirects for ", url);
        url = url_origin(url) + (loc.front() == '/' ? loc : "/" + loc);
        log::debug("hub: ", ref.repo_id, " redirects to ", loc);
        --attempt;
        continue;
      }
      break;  // absolute: the file is elsewhere (CDN); the metadata is in this answer
    }
    const bool transient = !r.error.empty() || retryable(r.status);
    if (!transient) break;
    // Nothing to wait for when the cache already has the file and the Hub is just unreachable.
    if (!r.error.empty() && cache_of(ref).cached_file(ref.revision, ref.filename)) break;
    if (attempt >= opt_.max_retries) break;
    const double w = backoff(opt_.retry_wait, attempt);
    log::warn("hub: ", r.error.empty() ? str("HTTP ", r.status) : r.error, " for ", url, "; retrying in ", w,
              " s (", attempt + 1, "/", opt_.max_retries, ")");
    sleep_s(w);
  }
  if (!r.error.empty())
    throw HubError(HubErrorCode::http, str("cannot reach ", endpoint_, " for ", describe(ref), " (", r.error,
                                           "); check the network, HF_ENDPOINT, or set HF_HUB_OFFLINE=1"));
  if (r.status >= 400) {
    // An absent file at a known commit is remembered (.no_exist), so an offline run knows it too.
    const std::string commit = trim(r.header("x-repo-commit"));
    if (r.header("x-error-code") == "EntryNotFound" && is_commit_hash(commit)) {
      const RepoCache cache = cache_of(ref);
      cache.write_ref(ref.revision, commit);
      cache.mark_missing(commit, ref.filename);
    }
    raise(ref, r.status, r.header("x-error-code"), r.header("x-error-message"), url);
  }
  Metadata m;
  m.commit = trim(r.header("x-repo-commit"));
  m.etag = normalize_etag(r.header("x-linked-etag").empty() ? r.header("etag") : r.header("x-linked-etag"));
  const std::string size =
      r.header("x-linked-size").empty() ? r.header("content-length") : r.header("x-linked-size");
  if (!size.empty()) m.size = std::strtoll(size.c_str(), nullptr, 10);
  m.location = r.header("location").empty() ? url : r.header("location");
  if (m.commit.empty() || m.etag.empty() || m.size < 0)
    throw HubError(HubErrorCode::http,
                   str(url, " answered HTTP ", r.status, " without ", m.commit.empty() ? "X-Repo-Commit" : "",
                       m.etag.empty() ? " ETag" : "", m.size < 0 ? " a size" : "", ": is HF_ENDPOINT (",
                       endpoint_, ") a Hugging Face Hub?"));
  if (m.etag.find('/') != std::string::npos || m.etag.find("..") != std::string::npos)
    throw HubError(HubErrorCode::http, str(url, ": unusable ETag '", m.etag, "'"));
  return m;
}

void HubClient::download(const FileRef& ref, const RepoCache& cache, const Metadata& meta) {
  const std::string blob = cache.blob_path(meta.etag);
  std::error_code ec;
  if (stdfs::is_regular_file(blob, ec)) return;
  const std::string lock_path = cache.lock_path(meta.etag);
  stdfs::create_directories(stdfs::path(lock_path).parent_path(), ec);
  stdfs::create_directories(stdfs::path(blob).parent_path(), ec);
  if (ec) fail("cannot create ", stdfs::path(blob).parent_path().string(), " (", ec.message(), ")");
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot open the lock file ", lock_path, " (", std::strerror(errno), ")");
  FileLock lock(fd);
  // Another process (a rank of this node, a pod on the same volume) may be downloading this blob: wait while
  // its .incomplete file grows, give up when it stalls.
  const std::string partial = cache.incomplete_path(meta.etag);
  auto last_change = std::chrono::steady_clock::now();
  int64_t last_size = file_size(partial);
  bool told = false;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      fail("cannot lock ", lock_path, " (", std::strerror(errno), ")");
    if (!told) {
      log::info("waiting for another process to download ", describe(ref), " (lock ", lock_path, ")");
      told = true;
    }
    sleep_s(0.05);
    const int64_t s = file_size(partial);
    const auto now = std::chrono::steady_clock::now();
    if (s != last_size) {
      last_size = s;
      last_change = now;
    } else if (std::chrono::duration<double>(now - last_change).count() > opt_.lock_stall_timeout) {
      fail("gave up waiting for ", lock_path, ": the process holding it made no progress on ", partial,
           " for ", opt_.lock_stall_timeout,
           " s (CORETRAIN_HUB_LOCK_TIMEOUT); if no download is running, remove the lock ", "file");
    }
  }
  if (stdfs::is_regular_file(blob, ec)) return;  // it finished while we waited
  fetch_blob(ref, cache, meta);
}

void HubClient::fetch_blob(const FileRef& ref, const RepoCache& cache, const Metadata& meta) {
  const std::string blob = cache.blob_path(meta.etag);
  const std::string partial = cache.incomplete_path(meta.etag);
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot write ", partial, " (", std::strerror(errno), ")");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  auto have = [&] {
    struct stat st {};
    return ::fstat(fd, &st) == 0 ? static_cast<int64_t>(st.st_size) : int64_t{0};
  };
  if (have() > meta.size && ::ftruncate(fd, 0) != 0) fail("cannot truncate ", partial);
  const bool same_host = url_origin(meta.location) == url_origin(endpoint_);
  DownloadProgress progress(ref.filename, meta.size, have(), opt_.progress);
  int failures = 0;
  while (true) {
    const int64_t start = have();
    if (start == meta.size) break;
    std::vector<std::string> headers = {"Accept-Encoding: identity"};
    // The token goes to the Hub only, never to the CDN host an LFS file redirects to.
    if (!token_.empty() && same_host) headers.push_back("Authorization: Bearer " + token_);
    if (start > 0) headers.push_back(str("Range: bytes=", start, "-"));
    const auto r = http_get_to_fd(meta.location, headers, opt_.download_timeout, fd,
                                  [&](int64_t, int64_t) { progress.update(have()); });
    const int64_t now = have();
    if (r.error.empty() && (r.status == 200 || r.status == 206)) {
      if (now == meta.size) break;
      if (now > meta.size) {
        if (::ftruncate(fd, 0) != 0) fail("cannot truncate ", partial);
        throw HubError(HubErrorCode::http,
                       str("downloading ", describe(ref), ": got ", now, " bytes, the Hub said ", meta.size,
                           "; the partial file was discarded, try again"));
      }
    } else if (r.error.empty() && r.status == 416) {
      // The range no longer fits the file: start over.
      if (::ftruncate(fd, 0) != 0) fail("cannot truncate ", partial);
    } else if (r.error.empty() && !retryable(r.status)) {
      raise(ref, r.status, r.header("x-error-code"), r.header("x-error-message"), meta.location);
    }
    // A dropped connection, a timeout, a short body or a transient status: resume from what arrived.
    // Progress resets the retry budget, so a long download survives several drops.
    if (now > start) failures = 0;
    if (failures >= opt_.max_retries)
      throw HubError(HubErrorCode::http,
                     str("downloading ", describe(ref), " from ", meta.location, " failed after ", failures,
                         " retries (", r.error.empty() ? str("HTTP ", r.status) : r.error, "); ", now, " of ",
                         meta.size, " bytes are kept in ", partial, " and the next run resumes there"));
    const double w = now > start ? 0.0 : backoff(opt_.retry_wait, failures);
    ++failures;
    log::warn("hub: ", r.error.empty() ? str("HTTP ", r.status) : r.error, " while downloading ",
              ref.filename, " (", now, " of ", meta.size, " bytes); resuming",
              w > 0 ? str(" in ", w, " s") : std::string());
    if (w > 0) sleep_s(w);
  }
  progress.finish(have());
  if (::fsync(fd) != 0) fail("fsync ", partial, " failed (", std::strerror(errno), ")");
  if (::rename(partial.c_str(), blob.c_str()) != 0)
    fail("cannot move ", partial, " to ", blob, " (", std::strerror(errno), ")");
  fs::fsync_path(stdfs::path(blob).parent_path().string());
}

}  // namespace ct::hub

#include "hub/hub_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <random>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"

namespace ct::hub {
namespace stdfs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string home() {
  const std::string h = env("HOME");
  return h.empty() ? "/root" : h;
}

std::string expand_user(const std::string& p) {
  if (p == "~") return home();
  if (p.rfind("~/", 0) == 0) return home() + p.substr(1);
  return p;
}

bool truthy(const std::string& v) {
  std::string s = v;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

}  // namespace

std::string hf_home() {
  const std::string h = env("HF_HOME");
  if (!h.empty()) return expand_user(h);
  const std::string xdg = env("XDG_CACHE_HOME");
  return (xdg.empty() ? home() + "/.cache" : expand_user(xdg)) + "/huggingface";
}

std::string hub_cache_dir(const std::string& cache_dir, bool transformers_env) {
  if (!cache_dir.empty()) return expand_user(cache_dir);
  if (transformers_env)
    for (const char* name :
         {"TRANSFORMERS_CACHE", "PYTORCH_TRANSFORMERS_CACHE", "PYTORCH_PRETRAINED_BERT_CACHE"}) {
      const std::string v = env(name);
      if (v.empty()) continue;
      static std::once_flag once;
      std::call_once(once, [&] {
        log::warn("Using `", name,
                  "` is deprecated and will be removed in v5 of Transformers. Use `HF_HOME` ",
                  "instead. (coretrain honours it as transformers v4 does: cache ", expand_user(v), ")");
      });
      return expand_user(v);
    }
  for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"}) {
    const std::string v = env(name);
    if (!v.empty()) return expand_user(v);
  }
  return hf_home() + "/hub";
}

bool offline_from_env() {
  return truthy(env("HF_HUB_OFFLINE")) || truthy(env("TRANSFORMERS_OFFLINE"));
}

RepoCache::RepoCache(std::string root, RepoType type, std::string repo_id)
    : root_(std::move(root)), folder_(repo_folder_name(type, repo_id)) {}

std::optional<std::string> RepoCache::commit_of(const std::string& revision) const {
  if (is_commit_hash(revision)) return revision;
  std::error_code ec;
  const std::string p = ref_path(revision);
  if (!stdfs::is_regular_file(p, ec)) return std::nullopt;
  std::string c = fs::read_file(p);
  while (!c.empty() && std::isspace(static_cast<unsigned char>(c.back()))) c.pop_back();
  if (c.empty()) return std::nullopt;
  return c;
}

void RepoCache::write_ref(const std::string& revision, const std::string& commit) const {
  if (revision == commit) return;
  const auto cur = commit_of(revision);
  if (cur && *cur == commit) return;
  const std::string p = ref_path(revision);
  std::error_code ec;
  stdfs::create_directories(stdfs::path(p).parent_path(), ec);
  fs::write_file_atomic(p, commit);
}

std::optional<std::string> RepoCache::cached_file(const std::string& revision,
                                                  const std::string& filename) const {
  const auto commit = commit_of(revision);
  if (!commit) return std::nullopt;
  const std::string p = snapshot_path(*commit, filename);
  std::error_code ec;
  if (stdfs::is_regular_file(p, ec)) return p;  // follows the symlink: a dangling link is not a cached file
  return std::nullopt;
}

bool RepoCache::known_missing(const std::string& revision, const std::string& filename) const {
  const auto commit = commit_of(revision);
  std::error_code ec;
  return commit && stdfs::exists(no_exist_path(*commit, filename), ec);
}

void RepoCache::mark_missing(const std::string& commit, const std::string& filename) const {
  const std::string p = no_exist_path(commit, filename);
  std::error_code ec;
  stdfs::create_directories(stdfs::path(p).parent_path(), ec);
  if (!stdfs::exists(p, ec)) fs::write_file_atomic(p, "");
}

std::string RepoCache::link_snapshot(const std::string& commit, const std::string& filename,
                                     const std::string& etag) const {
  const std::string p = snapshot_path(commit, filename);
  std::error_code ec;
  stdfs::create_directories(stdfs::path(p).parent_path(), ec);
  if (ec) fail("cannot create ", stdfs::path(p).parent_path().string(), " (", ec.message(), ")");
  std::string target = "../../";
  for (char c : filename)
    if (c == '/') target += "../";
  target += "blobs/" + etag;
  // A link made beside it and renamed over: a concurrent reader sees the old link or the new one, never none.
  const std::string tmp = str(p, ".tmp-link-", ::getpid(), "-", std::random_device{}());
  stdfs::remove(tmp, ec);
  if (::symlink(target.c_str(), tmp.c_str()) != 0) fail("cannot create the symlink ", p, " -> ", target);
  if (::rename(tmp.c_str(), p.c_str()) != 0) {
    stdfs::remove(tmp, ec);
    fail("cannot create the symlink ", p, " -> ", target);
  }
  return p;
}

}  // namespace ct::hub

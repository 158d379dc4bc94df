#include "tasks/question_answering/squad_dataset.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "data/http_fetch.h"

namespace ct::tasks {
namespace stdfs = std::filesystem;

namespace {

constexpr const char* kDefaultBase = "https://rajpurkar.github.io/SQuAD-explorer/dataset";

bool env_true(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return false;
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

// An flock held for the object's life.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(path, ": cannot open the lock file (", std::strerror(errno), ")");
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd_);
      fail(path, ": cannot lock (", std::strerror(e), ")");
    }
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

// The first bytes of a body, on one line, for an error message.
std::string snippet(std::string_view text) {
  std::string s;
  for (char c : text.substr(0, 60)) s += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  if (text.size() > 60) s += "...";
  return s;
}

}  // namespace

SquadDataset resolve_squad_dataset(const std::string& name, const std::string& config) {
  SquadDataset ds;
  if (name == "squad" || name == "rajpurkar/squad") {
    ds.name = "squad";
  } else if (name == "squad_v2" || name == "rajpurkar/squad_v2") {
    ds.name = "squad_v2";
    ds.v2 = true;
  } else {
    fail("--dataset_name: '", name,
         "' is not available in coretrain (it reads squad, squad_v2, rajpurkar/squad, rajpurkar/squad_v2, a "
         "SQuAD-shaped Hub dataset as org/name or a local dataset folder; other data: "
         "--train_file/--validation_file/--test_file as JSON, CSV or Parquet)");
  }
  const std::string want = ds.v2 ? "squad_v2" : "plain_text";
  if (!config.empty() && config != want)
    fail("--dataset_config_name: '", config, "' is not a config of ", name, " (it has one: ", want, ")");
  return ds;
}

std::string squad_file_name(const SquadDataset& ds, const std::string& split) {
  const char* v = ds.v2 ? "v2.0" : "v1.1";
  if (split == "train") return str("train-", v, ".json");
  if (split == "validation") return str("dev-", v, ".json");
  fail(ds.name, " has no '", split, "' split (it has train and validation)");
}

bool squad_json_source() {
  const char* v = std::getenv("CORETRAIN_SQUAD_URL");
  return v && *v;
}

bool is_squad_name(const std::string& name) {
  return name == "squad" || name == "rajpurkar/squad" || name == "squad_v2" || name == "rajpurkar/squad_v2";
}

std::string squad_base_url() {
  std::string base = kDefaultBase;
  if (const char* v = std::getenv("CORETRAIN_SQUAD_URL"); v && *v) base = v;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

bool datasets_offline() {
  return env_true("HF_DATASETS_OFFLINE") || env_true("HF_HUB_OFFLINE");
}

std::string squad_cache_path(const std::string& root, const std::string& url) {
  std::string rest = url;
  if (auto p = rest.find("://"); p != std::string::npos) rest = rest.substr(p + 3);
  std::string out = root + "/coretrain-squad";
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t slash = rest.find('/', pos);
    if (slash == std::string::npos) slash = rest.size();
    std::string seg = rest.substr(pos, slash - pos);
    pos = slash + 1;
    if (seg.empty()) continue;
    for (char& c : seg)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) c = '_';
    if (seg == "." || seg == "..") seg = "_";
    out += "/" + seg;
  }
  return out;
}

void check_squad_json(std::string_view text, const std::string& what) {
  const auto doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  const char* expected = "expected SQuAD JSON: an object with \"version\" and a \"data\" array";
  if (doc.is_discarded()) fail(what, ": not JSON (", expected, "); it starts with '", snippet(text), "'");
  if (!doc.is_object() || !doc.contains("data") || !doc["data"].is_array() || !doc.contains("version"))
    fail(what, ": not SQuAD JSON (", expected, "); it starts with '", snippet(text), "'");
}

std::string fetch_squad_file(const std::string& url, const std::string& root, bool offline) {
  const std::string path = squad_cache_path(root, url);
  std::error_code ec;
  if (stdfs::is_regular_file(path, ec)) return path;
  if (offline)
    fail(url, " is not in the datasets cache (", path,
         ") and HF_DATASETS_OFFLINE/HF_HUB_OFFLINE forbids downloading it: run once online, or copy the file "
         "there");
  stdfs::create_directories(stdfs::path(path).parent_path(), ec);
  if (ec) fail(path, ": cannot create the cache folder (", ec.message(), ")");
  FileLock lock(path + ".lock");
  if (stdfs::is_regular_file(path, ec)) return path;  // another process fetched it while we waited
  std::string tmp = path + ".incomplete-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) fail(path, ": cannot create a temporary file beside it (", std::strerror(errno), ")");
  ::close(fd);
  try {
    log::info("downloading ", url, " -> ", path);
    data::http_fetch_to_file(url, tmp);
    const std::string body = fs::read_file(tmp);
    check_squad_json(body, url);
    ::chmod(tmp.c_str(), 0644);
    fs::fsync_path(tmp);
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail(path, ": rename failed (", std::strerror(errno), ")");
    log::info(url, ": ", body.size(), " bytes cached");
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  return path;
}

}  // namespace ct::tasks

#include "core/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace ct::fs {

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": cannot open (", std::strerror(errno), ")");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) fail(path, ": read error");
  return s.str();
}

void fsync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) fail(path, ": cannot open for fsync (", std::strerror(errno), ")");
  ::fsync(fd);
  ::close(fd);
}

void write_file_atomic(const std::string& path, std::string_view content) {
  // A unique temporary name (mkstemp), not one derived from the pid: pods have their own pid namespaces, so
  // writers on a shared volume (every node's feature cache on one PVC) can have the same pid.
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) fail(path, ": cannot create a temporary file beside it (", std::strerror(errno), ")");
  ::fchmod(fd, 0644);
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      fail(tmp, ": write failed (", std::strerror(e), ")");
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    fail(tmp, ": fsync/close failed (", std::strerror(errno), ")");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    fail(path, ": rename failed (", std::strerror(e), ")");
  }
}

void commit_dir(const std::string& tmp_dir, const std::string& final_dir, bool replace) {
  namespace stdfs = std::filesystem;
  for (const auto& entry : stdfs::recursive_directory_iterator(tmp_dir))
    if (entry.is_regular_file()) fsync_path(entry.path().string());
  fsync_path(tmp_dir);
  std::error_code ec;
  if (stdfs::exists(final_dir, ec)) {
    if (!replace) fail(final_dir, ": already exists");
    stdfs::remove_all(final_dir, ec);
  }
  if (::rename(tmp_dir.c_str(), final_dir.c_str()) != 0)
    fail(final_dir, ": rename from ", tmp_dir, " failed (", std::strerror(errno), ")");
  const auto parent = stdfs::path(final_dir).parent_path();
  fsync_path(parent.empty() ? "." : parent.string());
}

}  // namespace ct::fs

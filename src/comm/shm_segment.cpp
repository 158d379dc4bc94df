// POSIX shared-memory segments with an ownership header, and the leftover sweep.
#include "comm/shm_segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"
#include "core/log.h"

namespace ct::comm {
namespace {

struct Header {
  std::atomic<uint64_t> magic;  // written last: a reader that sees it sees the rest
  int32_t creator_pid;
  uint32_t pad;
  uint64_t payload_bytes;
};

}  // namespace

ShmSegment ShmSegment::create(const std::string& name, size_t payload_bytes) {
  size_t size = kHeaderBytes + payload_bytes;
  // A segment is sized sparse and its pages are allocated when first touched: past the size of the tmpfs
  // behind /dev/shm (a container's is often 64 MB) that touch is a SIGBUS in the middle of training, so a
  // segment that cannot fit is refused here, with what to change.
  struct statvfs fs {};
  if (::statvfs("/dev/shm", &fs) == 0) {
    const unsigned long long free_bytes = static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize;
    if (free_bytes < size)
      fail("shm: segment ", name, " needs ", size >> 20, " MiB but /dev/shm has ", free_bytes >> 20,
           " MiB free (the node's ranks keep their gradients, shared optimizer state and collective buffers "
           "there): give /dev/shm more room (docker --shm-size, a Memory emptyDir) or run fewer ranks");
  }
  int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) fail("shm: cannot create segment ", name, ": ", std::strerror(errno));
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int e = errno;
    ::close(fd);
    ::shm_unlink(name.c_str());
    fail("shm: cannot size segment ", name, " to ", size, " bytes: ", std::strerror(e));
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  ::close(fd);
  if (p == MAP_FAILED) {
    ::shm_unlink(name.c_str());
    fail("shm: cannot map segment ", name, " (", size, " bytes): ", std::strerror(e));
  }
  auto* h = static_cast<Header*>(p);
  h->creator_pid = ::getpid();
  h->payload_bytes = payload_bytes;
  h->magic.store(kMagic, std::memory_order_release);
  ShmSegment s;
  s.name_ = name;
  s.base_ = static_cast<uint8_t*>(p);
  s.size_ = size;
  s.owner_ = true;
  return s;
}

bool ShmSegment::try_open(const std::string& name, ShmSegment& out) {
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    fail("shm: cannot open segment ", name, ": ", std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < kHeaderBytes) {
    ::close(fd);
    return false;
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  ::close(fd);
  if (p == MAP_FAILED) fail("shm: cannot map segment ", name, ": ", std::strerror(e));
  auto* h = static_cast<Header*>(p);
  if (h->magic.load(std::memory_order_acquire) != kMagic || h->payload_bytes + kHeaderBytes != size) {
    ::munmap(p, size);
    return false;
  }
  out = ShmSegment();
  out.name_ = name;
  out.base_ = static_cast<uint8_t*>(p);
  out.size_ = size;
  return true;
}

ShmSegment::~ShmSegment() {
  if (owner_) unlink();
  if (base_) ::munmap(base_, size_);
}

ShmSegment::ShmSegment(ShmSegment&& o) noexcept {
  *this = std::move(o);
}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    if (owner_) unlink();
    if (base_) ::munmap(base_, size_);
    name_ = std::move(o.name_);
    base_ = o.base_;
    size_ = o.size_;
    owner_ = o.owner_;
    o.base_ = nullptr;
    o.size_ = 0;
    o.owner_ = false;
  }
  return *this;
}

void ShmSegment::unlink() {
  if (owner_ && !name_.empty()) ::shm_unlink(name_.c_str());
  owner_ = false;
}

bool pid_dead(int pid) {
  if (pid <= 0) return true;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  // A killed child stays a zombie until its parent reaps it; it is dead for our purpose.
  std::ifstream f(str("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(f, line)) return false;
  auto rp = line.rfind(')');
  return rp != std::string::npos && rp + 2 < line.size() && (line[rp + 2] == 'Z' || line[rp + 2] == 'X');
}

std::vector<std::string> remove_leftover_segments() {
  std::vector<std::string> removed;
  DIR* d = ::opendir("/dev/shm");
  if (!d) return removed;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.rfind("ct-", 0) != 0) continue;
    std::string name = "/" + n;
    int fd = ::shm_open(name.c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) continue;
    struct stat st {};
    bool dead = false;
    if (::fstat(fd, &st) == 0) {
      if (static_cast<size_t>(st.st_size) >= ShmSegment::kHeaderBytes) {
        void* p = ::mmap(nullptr, ShmSegment::kHeaderBytes, PROT_READ, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
          auto* h = static_cast<const Header*>(p);
          if (h->magic.load(std::memory_order_acquire) == ShmSegment::kMagic)
            dead = pid_dead(h->creator_pid);
          else
            dead = ::time(nullptr) - st.st_mtime > 60;
          ::munmap(p, ShmSegment::kHeaderBytes);
        }
      } else {
        dead = ::time(nullptr) - st.st_mtime > 60;  // creation never finished
      }
    }
    ::close(fd);
    if (dead && ::shm_unlink(name.c_str()) == 0) {
      log::info("shm: removed leftover segment /dev/shm/", n, " of a crashed job");
      removed.push_back(name);
    }
  }
  ::closedir(d);
  return removed;
}

std::string shm_name_part(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (out.size() >= 24) break;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '.' || c == '-';
    out += ok ? c : '_';
  }
  return out.empty() ? std::string("job") : out;
}

}  // namespace ct::comm

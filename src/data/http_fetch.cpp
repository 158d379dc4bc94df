#include "data/http_fetch.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "core/log.h"
#include "hub/hub_http.h"

namespace ct::data {
namespace {

bool retryable(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

}  // namespace

void http_fetch_to_file(const std::string& url, const std::string& path, const FetchOptions& o) {
  std::string last;
  for (int attempt = 1; attempt <= o.attempts; ++attempt) {
    // O_APPEND as the transfer wants it; truncated per attempt, so a retry never appends to a partial body.
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) fail(path, ": cannot create (", std::strerror(errno), ")");
    hub::HttpResponse r;
    try {
      r = hub::http_get_to_fd(url, {}, o.timeout_s, fd);
    } catch (const Error& e) {
      ::close(fd);
      fail(path, ": ", e.what(), " while downloading ", url);
    }
    const bool closed = ::close(fd) == 0;
    if (r.error.empty() && r.status == 200) {
      if (!closed) fail(path, ": write failed");
      return;
    }
    if (!r.error.empty()) {
      last = str(url, ": ", r.error);
    } else {
      last = str(url, ": HTTP ", r.status);
      if (!retryable(r.status)) break;
    }
    if (attempt < o.attempts) {
      log::warn(last, "; retrying (", attempt, "/", o.attempts - 1, ")");
      std::this_thread::sleep_for(std::chrono::milliseconds(500 * attempt));
    }
  }
  fail(last);
}

}  // namespace ct::data

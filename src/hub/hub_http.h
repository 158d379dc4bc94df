// The two HTTP requests the Hub client makes, over libcurl: a HEAD that does not follow redirects (the client
// follows relative ones itself) and a GET (following redirects) that appends the body to a file descriptor.
// Timeouts are per phase: connecting, and no byte for `timeout_s` while reading (as requests' timeout= in
// huggingface_hub).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ct::hub {

struct HttpResponse {
  long status = 0;                             // 0: no HTTP answer (see error)
  std::map<std::string, std::string> headers;  // lower-case names, last value wins
  std::string body;                            // HEAD: empty; GET: only when status is not 200/206
  std::string error;                           // a connection-level failure (curl's message), else empty
  int64_t written = 0;                         // GET: body bytes appended to the file

  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// (bytes so far in this request, bytes expected in this request or -1)
using ProgressFn = std::function<void(int64_t, int64_t)>;

HttpResponse http_head(const std::string& url, const std::vector<std::string>& headers, double timeout_s);
// Body of a 206 answer appended to `fd` (opened O_APPEND) as it arrives; a 200 truncates the file first (a
// full answer to a Range request restarts the download); other answers' bodies go to response.body.
HttpResponse http_get_to_fd(const std::string& url, const std::vector<std::string>& headers, double timeout_s,
                            int fd, const ProgressFn& progress = {});

}  // namespace ct::hub

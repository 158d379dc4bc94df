// One HTTP(S) GET into a file, over libcurl: follows redirects, connect timeout and a stall timeout (no byte
// for `stall_timeout_s`), a few retries on connection failures and 408/429/5xx answers. Proxies come from the
// usual environment (http_proxy, https_proxy, no_proxy) as curl reads them.
#pragma once

#include <string>

namespace ct::data {

struct FetchOptions {
  double connect_timeout_s = 10;
  double stall_timeout_s = 30;
  int attempts = 3;
};

// Writes the body of a 200 answer to `path` (created or truncated). Throws ct::Error naming the URL and what
// went wrong (the HTTP status, or curl's message) otherwise; `path` may then hold a partial body.
void http_fetch_to_file(const std::string& url, const std::string& path, const FetchOptions& options = {});

}  // namespace ct::data

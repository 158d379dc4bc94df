// One HTTP(S) GET into a file for the dataset downloads, over the Hub client's transfer (src/hub/hub_http:
// libcurl, redirects followed, a connect and a stall timeout), with a few retries on connection failures and
// 408/429/5xx answers. Proxies come from the usual environment (http_proxy, https_proxy, no_proxy) as curl
// reads them.
#pragma once

#include <string>

namespace ct::data {

struct FetchOptions {
  double timeout_s = 30;  // connecting, and no byte for this long while reading
  int attempts = 3;
};

// Writes the body of a 200 answer to `path` (created or truncated). Throws ct::Error naming the URL and what
// went wrong (the HTTP status, or curl's message) otherwise; `path` may then hold a partial body.
void http_fetch_to_file(const std::string& url, const std::string& path, const FetchOptions& options = {});

}  // namespace ct::data

#include "data/http_fetch.h"

#include <curl/curl.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "core/log.h"

namespace ct::data {
namespace {

size_t write_cb(char* ptr, size_t size, size_t n, void* user) {
  return std::fwrite(ptr, size, n, static_cast<std::FILE*>(user)) * size;
}

bool retryable(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

}  // namespace

void http_fetch_to_file(const std::string& url, const std::string& path, const FetchOptions& o) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::string last;
  for (int attempt = 1; attempt <= o.attempts; ++attempt) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) fail(path, ": cannot create (", std::strerror(errno), ")");
    CURL* c = curl_easy_init();
    if (!c) {
      std::fclose(f);
      fail(url, ": curl_easy_init failed");
    }
    char err[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.connect_timeout_s * 1000));
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME,
                     static_cast<long>(o.stall_timeout_s < 1 ? 1 : o.stall_timeout_s));
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "coretrain");
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
    const CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    const bool closed = std::fclose(f) == 0;
    if (rc == CURLE_OK && status == 200) {
      if (!closed) fail(path, ": write failed");
      return;
    }
    if (rc != CURLE_OK) {
      last = str(url, ": ", err[0] ? err : curl_easy_strerror(rc));
      if (rc == CURLE_WRITE_ERROR) fail(path, ": write failed while downloading ", url);
    } else {
      last = str(url, ": HTTP ", status);
      if (!retryable(status)) break;
    }
    if (attempt < o.attempts) {
      log::warn(last, "; retrying (", attempt, "/", o.attempts - 1, ")");
      std::this_thread::sleep_for(std::chrono::milliseconds(500 * attempt));
    }
  }
  fail(last);
}

}  // namespace ct::data

#include "hub/hub_http.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "core/error.h"

namespace ct::hub {
namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  HttpResponse* resp = nullptr;
  int fd = -1;
  bool to_fd = false;  // decided when the first body byte arrives (status known by then)
  bool decided = false;
  const ProgressFn* progress = nullptr;
  int64_t expected = -1;
  bool write_failed = false;
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string line(data, size * n);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
  if (line.rfind("HTTP/", 0) == 0) {
    t->resp->headers.clear();  // a new response (e.g. after "100 Continue")
    const auto sp = line.find(' ');
    if (sp != std::string::npos) t->resp->status = std::strtol(line.c_str() + sp + 1, nullptr, 10);
    return size * n;
  }
  const auto colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  size_t v = colon + 1;
  while (v < line.size() && (line[v] == ' ' || line[v] == '\t')) ++v;
  t->resp->headers[name] = line.substr(v);
  return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  if (!t->decided) {
    t->decided = true;
    const std::string cl = t->resp->header("content-length");
    if (!cl.empty()) t->expected = std::strtoll(cl.c_str(), nullptr, 10);
    t->to_fd = t->fd >= 0 && (t->resp->status == 200 || t->resp->status == 206);
    // A full answer restarts the file (the server ignored or refused the Range); the fd is O_APPEND.
    if (t->to_fd && t->resp->status == 200 && ::ftruncate(t->fd, 0) != 0) {
      t->write_failed = true;
      return 0;
    }
  }
  if (!t->to_fd) {
    if (t->resp->body.size() < 65536) t->resp->body.append(data, len);
    return len;
  }
  size_t done = 0;
  while (done < len) {
    const ssize_t w = ::write(t->fd, data + done, len - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      t->write_failed = true;
      return 0;  // aborts the transfer
    }
    done += static_cast<size_t>(w);
  }
  t->resp->written += static_cast<int64_t>(len);
  if (t->progress && *t->progress) (*t->progress)(t->resp->written, t->expected);
  return len;
}

HttpResponse perform(const std::string& url, const std::vector<std::string>& headers, double timeout_s,
                     bool head, int fd, const ProgressFn& progress) {
  global_init();
  HttpResponse resp;
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) fail("libcurl: curl_easy_init failed");
  CURL* c = curl.get();
  curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> list_guard(list, curl_slist_free_all);
  Transfer t;
  t.resp = &resp;
  t.fd = fd;
  t.progress = &progress;
  char errbuf[CURL_ERROR_SIZE] = {0};
  const long secs = std::max(1L, static_cast<long>(timeout_s + 0.999));
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
  // HEAD: redirects are the caller's (relative = renamed repo, absolute = where the file is). GET: followed,
  // as requests does; curl sends a custom Authorization header to the first host only.
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, head ? 0L : 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, secs);
  // No progress for `secs` seconds ends the transfer: requests' read timeout, not a cap on the whole file.
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, secs);
  if (head) curl_easy_setopt(c, CURLOPT_TIMEOUT, secs * 2);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "coretrain/0.1; hf_hub-compatible");
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  if (head) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  const CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (status) resp.status = status;
  if (t.write_failed) fail("writing the download failed (", std::strerror(errno), ")");
  if (rc != CURLE_OK) {
    resp.error = errbuf[0] ? std::string(errbuf) : std::string(curl_easy_strerror(rc));
    while (!resp.error.empty() && (resp.error.back() == '\n' || resp.error.back() == ' '))
      resp.error.pop_back();
  }
  return resp;
}

}  // namespace

HttpResponse http_head(const std::string& url, const std::vector<std::string>& headers, double timeout_s) {
  return perform(url, headers, timeout_s, /*head=*/true, -1, {});
}

HttpResponse http_get_to_fd(const std::string& url, const std::vector<std::string>& headers, double timeout_s,
                            int fd, const ProgressFn& progress) {
  return perform(url, headers, timeout_s, /*head=*/false, fd, progress);
}

}  // namespace ct::hub

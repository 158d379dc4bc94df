#include "hub/hub_url.h"

#include <cctype>
#include <cstdlib>

#include "core/error.h"

namespace ct::hub {

RepoType parse_repo_type(const std::string& s) {
  if (s == "model") return RepoType::model;
  if (s == "dataset") return RepoType::dataset;
  fail("repo type: expected model or dataset, got '", s, "'");
}

const char* repo_type_name(RepoType t) {
  return t == RepoType::model ? "model" : "dataset";
}

bool looks_like_repo_id(const std::string& id, std::string* why) {
  auto no = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (id.empty()) return no("it is empty");
  if (id.size() > 96) return no("it is longer than 96 characters");
  const auto slash = id.find('/');
  if (slash != std::string::npos && id.find('/', slash + 1) != std::string::npos)
    return no("a repo id has at most one '/' (org/name)");
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/'))
      return no(str("'", c, "' is not allowed (letters, digits, '-', '_', '.', one '/')"));
  if (id.find("--") != std::string::npos || id.find("..") != std::string::npos)
    return no("'--' and '..' are not allowed");
  for (const std::string& part : {id.substr(0, slash == std::string::npos ? id.size() : slash),
                                  slash == std::string::npos ? std::string("x") : id.substr(slash + 1)}) {
    if (part.empty()) return no("an empty part around '/'");
    if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.')
      return no("a part may not start or end with '-' or '.'");
  }
  if (why) why->clear();
  return true;
}

bool is_commit_hash(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c)))
      return false;
  return true;
}

std::string percent_encode(const std::string& s, const std::string& safe) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-' || c == '~' ||
        safe.find(static_cast<char>(c)) != std::string::npos) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string hub_endpoint(const std::string& override_endpoint) {
  std::string e = override_endpoint;
  if (e.empty()) {
    const char* env = std::getenv("HF_ENDPOINT");
    e = env && *env ? env : "https://huggingface.co";
  }
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

std::string resolve_url(const std::string& endpoint, RepoType type, const std::string& repo_id,
                        const std::string& revision, const std::string& filename) {
  return str(endpoint, "/", type == RepoType::dataset ? "datasets/" : "", repo_id, "/resolve/",
             percent_encode(revision, ""), "/", percent_encode(filename, "/"));
}

std::string repo_folder_name(RepoType type, const std::string& repo_id) {
  std::string out = type == RepoType::model ? "models" : "datasets";
  size_t b = 0;
  while (true) {
    const auto e = repo_id.find('/', b);
    out += "--" + repo_id.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

std::string url_origin(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  const auto path = url.find('/', scheme + 3);
  return url.substr(0, path);
}

}  // namespace ct::hub

#include "train/error_file.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>

#include <nlohmann/json.hpp>

#include "core/fs.h"

namespace ct::train {

std::string torchelastic_error_json(const std::string& type, const std::string& text,
                                    const std::string& printed, long long unix_seconds) {
  nlohmann::json j;
  j["message"]["message"] = type + ": " + text;
  j["message"]["extraInfo"]["py_callstack"] = printed;
  j["message"]["extraInfo"]["timestamp"] = std::to_string(unix_seconds);
  // Messages may hold bytes from files (paths, JSON); never fail on invalid UTF-8.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool write_torchelastic_error_file(const std::string& type, const std::string& text,
                                   const std::string& printed) noexcept {
  const char* path = std::getenv("TORCHELASTIC_ERROR_FILE");
  if (!path || !*path) return false;
  try {
    fs::write_file_atomic(path, torchelastic_error_json(type, text, printed, std::time(nullptr)));
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "coretrain: cannot write TORCHELASTIC_ERROR_FILE %s: %s\n", path, e.what());
  } catch (...) {
    std::fprintf(stderr, "coretrain: cannot write TORCHELASTIC_ERROR_FILE %s\n", path);
  }
  return false;
}

}  // namespace ct::train

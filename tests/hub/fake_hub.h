// Starts tests/hub/fake_hub.py (a loopback stand-in for huggingface.co plus a "CDN" on a second port) for a
// test, and reads back the requests it saw.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "hub/hub_http.h"

namespace ct::hub::test {

class FakeHub {
 public:
  // Serves `root` (see fake_hub.py); fails after 10 s without the server listening.
  explicit FakeHub(const std::string& root) : root_(root) {
    const std::string port_file = root + "/.port";
    std::filesystem::remove(port_file);
    const std::string script = std::string(CORETRAIN_SOURCE_DIR) + "/tests/hub/fake_hub.py";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl("/usr/bin/python3", "python3", script.c_str(), root.c_str(), port_file.c_str(), (char*)nullptr);
      ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!std::filesystem::exists(port_file)) {
      if (std::chrono::steady_clock::now() > deadline) fail("fake_hub.py did not start within 10 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::istringstream in(fs::read_file(port_file));
    in >> port_ >> cdn_port_;
  }
  ~FakeHub() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int st = 0;
      ::waitpid(pid_, &st, 0);
    }
  }
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int cdn_port() const { return cdn_port_; }
  const std::string& root() const { return root_; }

  // Every request seen so far: [{server: hub|cdn, method, path, range, auth}].
  nlohmann::json requests() const {
    const std::string tmp = root_ + "/.stats";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    const auto r = http_get_to_fd(url() + "/_stats", {}, 5, fd);
    ::close(fd);
    if (r.status != 200) fail("fake hub /_stats: ", r.status, " ", r.error);
    return nlohmann::json::parse(fs::read_file(tmp));
  }
  // Requests whose path contains `needle` (and, when given, of that method / server).
  int count(const std::string& needle, const std::string& method = "", const std::string& server = "") const {
    int n = 0;
    for (const auto& r : requests())
      if (r["path"].get<std::string>().find(needle) != std::string::npos &&
          (method.empty() || r["method"] == method) && (server.empty() || r["server"] == server))
        ++n;
    return n;
  }

 private:
  std::string root_;
  pid_t pid_ = -1;
  int port_ = 0, cdn_port_ = 0;
};

}  // namespace ct::hub::test

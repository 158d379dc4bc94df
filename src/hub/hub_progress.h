// What a download shows: on a terminal (stderr is a tty) a progress bar redrawn in place (bytes, rate, ETA);
// otherwise one log line when it starts and one when it ends, so job logs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ct::hub {

class DownloadProgress {
 public:
  // total: the file's size; start: bytes already there (a resumed download).
  DownloadProgress(std::string name, int64_t total, int64_t start, bool enabled = true);
  ~DownloadProgress();
  void update(int64_t have);  // bytes of the file present now
  void finish(int64_t have);

  static std::string human_bytes(double bytes);

 private:
  void draw(int64_t have, bool last);

  std::string name_;
  int64_t total_, start_;
  bool tty_, enabled_, done_ = false;
  std::chrono::steady_clock::time_point t0_, last_draw_;
};

}  // namespace ct::hub

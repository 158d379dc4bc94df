// Training progress for a person watching: on a terminal, one redrawn bar (steps, it/s, ETA, last loss) like
// tqdm; otherwise (logs, CI, pipes) a plain line every so often so log files stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ct::train {

class Progress {
 public:
  // enabled=false: silent (non-zero ranks, --disable_tqdm on a terminal still prints plain lines).
  Progress(std::string label, int64_t total, int64_t start, bool enabled, bool disable_bar = false,
           FILE* out = stderr);
  void update(int64_t done, double loss);
  // Extra figures shown after the loss (e.g. "12.3 samples/s, comm 2%").
  void set_extra(std::string extra) { extra_ = std::move(extra); }
  // Ends the bar's line so following logs start clean.
  void close();
  // A log line that must not be overwritten by the bar.
  void message(const std::string& line);

  static std::string format_duration(double seconds);

 private:
  void draw(bool force);

  std::string label_, extra_;
  int64_t total_, start_, done_;
  double loss_ = -1;
  bool enabled_, tty_, open_ = false;
  FILE* out_;
  std::chrono::steady_clock::time_point t0_, last_draw_;
  int64_t last_plain_ = -1;
};

}  // namespace ct::train

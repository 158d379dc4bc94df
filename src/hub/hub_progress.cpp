#include "hub/hub_progress.h"

#include <unistd.h>

#include <cstdio>

#include "core/log.h"

namespace ct::hub {

constexpr int64_t kAnnounceBytes = 10'000'000;

std::string DownloadProgress::human_bytes(double b) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (b >= 1000 && u < 4) {
    b /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

DownloadProgress::DownloadProgress(std::string name, int64_t total, int64_t start, bool enabled)
    : name_(std::move(name)),
      total_(total),
      start_(start),
      tty_(::isatty(2) != 0),
      enabled_(enabled),
      t0_(std::chrono::steady_clock::now()),
      last_draw_(t0_) {
  if (!enabled_) return;
  if (tty_)
    draw(start, false);
  else if (total_ >= kAnnounceBytes || start_ > 0)  // small files: the end line is enough
    log::info("downloading ", name_, " (", human_bytes(static_cast<double>(total_)), ")",
              start_ > 0 ? str(", resuming at ", human_bytes(static_cast<double>(start_))) : std::string());
}

DownloadProgress::~DownloadProgress() {
  if (enabled_ && tty_ && !done_) std::fputc('\n', stderr);
}

void DownloadProgress::update(int64_t have) {
  if (!enabled_ || !tty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(have, false);
}

void DownloadProgress::finish(int64_t have) {
  if (!enabled_ || done_) return;
  done_ = true;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  if (tty_) {
    draw(have, true);
    std::fputc('\n', stderr);
  } else {
    char t[32];
    std::snprintf(t, sizeof t, "%.2f", secs);
    log::info("downloaded ", name_, " (", human_bytes(static_cast<double>(have)), ") in ", t, " s, ",
              human_bytes(secs > 0 ? static_cast<double>(have - start_) / secs : 0), "/s");
  }
}

void DownloadProgress::draw(int64_t have, bool last) {
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  const double rate = secs > 0 ? static_cast<double>(have - start_) / secs : 0;
  const double frac = total_ > 0 ? static_cast<double>(have) / static_cast<double>(total_) : 1.0;
  constexpr int kWidth = 24;
  std::string bar(kWidth, ' ');
  for (int i = 0; i < static_cast<int>(frac * kWidth) && i < kWidth; ++i) bar[static_cast<size_t>(i)] = '#';
  std::string eta = "--";
  if (last) {
    eta = str(static_cast<int>(secs), "s");
  } else if (rate > 0 && total_ > have) {
    const int s = static_cast<int>(static_cast<double>(total_ - have) / rate);
    eta = str(s / 60, "m", s % 60 < 10 ? "0" : "", s % 60, "s");
  }
  std::fprintf(stderr, "\r%s: %3d%% [%s] %s/%s %s/s %s %s\x1b[K", name_.c_str(), static_cast<int>(frac * 100),
               bar.c_str(), human_bytes(static_cast<double>(have)).c_str(),
               human_bytes(static_cast<double>(total_)).c_str(), human_bytes(rate).c_str(),
               last ? "in" : "ETA", eta.c_str());
  std::fflush(stderr);
}

}  // namespace ct::hub

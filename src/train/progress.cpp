#include "train/progress.h"

#include <unistd.h>

#include <cmath>

#include "core/error.h"

namespace ct::train {

Progress::Progress(std::string label, int64_t total, int64_t start, bool enabled, bool disable_bar, FILE* out)
    : label_(std::move(label)), total_(total), start_(start), done_(start), enabled_(enabled), out_(out) {
  tty_ = !disable_bar && ::isatty(::fileno(out_));
  t0_ = last_draw_ = std::chrono::steady_clock::now();
}

std::string Progress::format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const int64_t t = static_cast<int64_t>(s + 0.5);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(t / 3600),
                  static_cast<long long>(t / 60 % 60), static_cast<long long>(t % 60));
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld", static_cast<long long>(t / 60),
                  static_cast<long long>(t % 60));
  return buf;
}

void Progress::update(int64_t done, double loss) {
  done_ = done;
  if (std::isfinite(loss)) loss_ = loss;
  draw(done_ >= total_);
}

void Progress::draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - t0_).count();
  const int64_t run = done_ - start_;
  const double rate = elapsed > 0 ? run / elapsed : 0;
  const double eta = rate > 0 ? (total_ - done_) / rate : NAN;
  if (tty_) {
    if (!force && std::chrono::duration<double>(now - last_draw_).count() < 0.2) return;
    last_draw_ = now;
    const int width = 30;
    const int fill = total_ > 0 ? static_cast<int>(width * done_ / total_) : width;
    std::string bar(fill, '#');
    bar.resize(width, ' ');
    std::string loss = loss_ >= 0 ? str(", loss=", loss_) : "";
    if (!extra_.empty()) loss += ", " + extra_;
    std::fprintf(out_, "\r%s: %3d%%|%s| %lld/%lld [%s<%s, %.2fit/s%s]\033[K", label_.c_str(),
                 total_ > 0 ? static_cast<int>(100 * done_ / total_) : 100, bar.c_str(),
                 static_cast<long long>(done_), static_cast<long long>(total_),
                 format_duration(elapsed).c_str(), format_duration(eta).c_str(), rate, loss.c_str());
    std::fflush(out_);
    open_ = true;
    return;
  }
  // Plain lines: about 20 per run, plus the last.
  const int64_t every = std::max<int64_t>(1, total_ / 20);
  if (!force && last_plain_ >= 0 && done_ - last_plain_ < every) return;
  if (last_plain_ == done_) return;
  last_plain_ = done_;
  std::string loss = loss_ >= 0 ? str(" loss ", loss_) : "";
  if (!extra_.empty()) loss += ", " + extra_;
  std::fprintf(out_, "%s: step %lld/%lld, %.2f it/s, elapsed %s, eta %s%s\n", label_.c_str(),
               static_cast<long long>(done_), static_cast<long long>(total_), rate,
               format_duration(elapsed).c_str(), format_duration(eta).c_str(), loss.c_str());
  std::fflush(out_);
}

void Progress::message(const std::string& line) {
  if (!enabled_) return;
  if (open_) std::fprintf(out_, "\r\033[K");
  std::fprintf(out_, "%s\n", line.c_str());
  if (open_) draw(true);
  std::fflush(out_);
}

void Progress::close() {
  if (!enabled_) return;
  draw(true);
  if (open_) std::fprintf(out_, "\n");
  open_ = false;
  std::fflush(out_);
}

}  // namespace ct::train

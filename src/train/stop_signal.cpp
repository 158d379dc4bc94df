#include "train/stop_signal.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "core/error.h"
#include "core/log.h"

namespace ct::train {
namespace {

std::atomic<int> g_pending{0};
std::atomic<int> g_graceful{0};  // depth of GracefulStopScope nesting
std::atomic<bool> g_installed{false};

// Async-signal-safe: atomics and _exit only.
void on_stop_signal(int sig) {
  if (g_graceful.load() > 0) {
    int none = 0;
    g_pending.compare_exchange_strong(none, sig);
    return;
  }
  _exit(128 + sig);
}

void handler(int sig) {
  on_stop_signal(sig);
}

sigset_t stop_set() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGINT);
  return s;
}

}  // namespace

void install_stop_signals() {
  if (g_installed.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigset_t s = stop_set();
  pthread_sigmask(SIG_BLOCK, &s, nullptr);
  std::thread([] {
    sigset_t w = stop_set();
    for (;;) {
      int sig = 0;
      if (sigwait(&w, &sig) == 0) on_stop_signal(sig);
    }
  }).detach();
}

int pending_stop_signal() {
  return g_pending.load();
}

void set_pending_stop_signal_for_test(int sig) {
  g_pending.store(sig);
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "signal " + std::to_string(sig);
  }
}

GracefulStopScope::GracefulStopScope() {
  g_graceful.fetch_add(1);
}

void GracefulStopScope::handled() {
  handled_ = true;
}

GracefulStopScope::~GracefulStopScope() {
  if (g_graceful.fetch_sub(1) != 1 || handled_ || !g_installed.load()) return;
  // An error on its way out wins: it is printed (and the exit is non-zero) as without the signal.
  if (std::uncaught_exceptions() > 0) return;
  // A signal that came after the last step's agreement: from here on we are outside training.
  if (const int sig = g_pending.exchange(0)) {
    log::warn(signal_name(sig), " after the last training step: exiting without the final save");
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(128 + sig);
  }
}

StopRequested::StopRequested(int sig, int64_t step, std::string checkpoint)
    : sig_(sig), step_(step), checkpoint_(std::move(checkpoint)) {
  what_ = str("stopping at step ", step_, " on ", signal_name(sig_), ": wrote ", checkpoint_);
}

}  // namespace ct::train

// Graceful stop on SIGTERM/SIGINT (an elastic agent or Kubernetes stopping the job). install_stop_signals()
// blocks both signals in the calling thread (so every thread started later inherits the mask and no blocking
// call anywhere sees EINTR) and starts one thread that waits for them with sigwait; a handler covers threads
// that existed before. What a signal does depends on the phase:
//   - inside a GracefulStopScope (the training loop): it only records the signal; the Trainer folds it into
//   the
//     per-step loss all-reduce, so every rank agrees on the step to stop at, saves a checkpoint there and
//     throws StopRequested; the process then exits with 128 + signal (143 for SIGTERM).
//   - elsewhere (reading data, tokenizing, evaluating, writing the final folder): the process exits at once
//     with 128 + signal (_exit; every output file is written to a temporary name and renamed, so none is seen
//     half-written).
// Without install_stop_signals() (in-process tests) nothing changes: no signal is ever pending.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

namespace ct::train {

void install_stop_signals();
// The first stop signal received inside a GracefulStopScope and not yet acted on; 0 when none.
int pending_stop_signal();
// "SIGTERM", "SIGINT", else "signal N".
std::string signal_name(int sig);

// While alive, a stop signal only sets the pending flag. On leaving, a signal still pending (it came after
// the last step's agreement) ends the process with 128 + signal, as outside training.
class GracefulStopScope {
 public:
  GracefulStopScope();
  ~GracefulStopScope();
  GracefulStopScope(const GracefulStopScope&) = delete;
  GracefulStopScope& operator=(const GracefulStopScope&) = delete;
  // The stop was acted on (checkpoint written): leaving the scope does not exit; the caller returns 128+sig.
  void handled();

 private:
  bool handled_ = false;
};

// Thrown on every rank at the agreed step after the checkpoint is complete; `coretrain qa` exits with
// exit_status(). Not a ct::Error: nothing on the way treats it as a failure.
class StopRequested : public std::exception {
 public:
  StopRequested(int sig, int64_t step, std::string checkpoint);
  const char* what() const noexcept override { return what_.c_str(); }
  int signal() const { return sig_; }
  int64_t step() const { return step_; }
  const std::string& checkpoint() const { return checkpoint_; }
  int exit_status() const { return 128 + sig_; }

 private:
  int sig_;
  int64_t step_;
  std::string checkpoint_, what_;
};

// For tests: records `sig` as if it had arrived inside a scope (0 clears).
void set_pending_stop_signal_for_test(int sig);

}  // namespace ct::train

// The workers of one node: started with fork+exec in their own process groups (so a stop reaches anything
// they start) with PR_SET_PDEATHSIG (so they die with the agent, even on kill -9), their output inherited,
// sent to files, or teed with a "[role<rank>]:" prefix; watched with waitpid every few milliseconds so the
// first failure is timed closely; stopped with a signal, a grace period, then SIGKILL.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "launch/rendezvous.h"

namespace ct::launch {

struct WorkerLaunch {
  int local_rank = 0;
  int rank = 0;
  std::vector<std::string> argv;  // argv[0] is a path (already resolved)
  std::vector<std::string> env;   // complete "NAME=value" list
  std::string stdout_file;        // "" = console
  std::string stderr_file;
  bool tee_stdout = false;  // also copy to the console with the prefix
  bool tee_stderr = false;
  bool console = true;  // false: the console sees nothing of this worker (--local-ranks-filter)
  std::string prefix;   // "[default3]:"
  std::string error_file;
};

class WorkerGroup {
 public:
  enum class State { running, succeeded, failed };

  explicit WorkerGroup(std::vector<WorkerLaunch> workers, std::string host);
  ~WorkerGroup();  // stops whatever still runs (SIGKILL)
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  void start();
  // Reaps exited workers; failed as soon as one exited non-zero or by a signal.
  State poll();
  // The failures seen so far (exit code, signal, error file message), first first.
  const std::vector<FailureRecord>& failures() const { return failures_; }
  // Sends sig to every running worker's process group, waits up to grace for them to exit, then SIGKILLs.
  void stop(int sig, std::chrono::milliseconds grace);
  bool all_exited() const;
  std::vector<pid_t> pids() const;

 private:
  struct Proc {
    WorkerLaunch spec;
    pid_t pid = -1;
    bool exited = false;
    int status = 0;
    std::vector<std::thread> pumps;
  };
  void reap(Proc& p, int status);

  std::vector<Proc> procs_;
  std::string host_;
  std::vector<FailureRecord> failures_;
};

// Reads a torchelastic error file ({"message": {"message": ..., "extraInfo": {...}}} or {"message": "..."});
// "" when absent or unreadable.
std::string read_error_file(const std::string& path);

// torchrun's text for a worker killed by a signal: "Signal 9 (SIGKILL) received by PID 123".
std::string signal_message(int sig, pid_t pid);

}  // namespace ct::launch

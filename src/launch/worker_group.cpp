// Process plumbing for the agent's workers. Everything a child needs (argv, envp, file descriptors) is built
// before fork: the agent has threads (heartbeat, store server, rendezvous coordinator), so the child may only
// make async-signal-safe calls until exec.
#include "launch/worker_group.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/log.h"

namespace ct::launch {

namespace {

std::mutex console_mu;

double now_unix() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int open_log(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  CT_CHECK(fd >= 0, "cannot open worker log '", path, "': ", std::strerror(errno));
  return fd;
}

// Copies a worker's stream line by line to its log file (if any) and to the console with the rank prefix.
void pump(int from, int file_fd, FILE* console, std::string prefix) {
  std::string pending;
  char buf[4096];
  auto flush_line = [&](const std::string& line) {
    if (file_fd >= 0) {
      ssize_t off = 0, n = static_cast<ssize_t>(line.size());
      while (off < n) {
        ssize_t w = ::write(file_fd, line.data() + off, static_cast<size_t>(n - off));
        if (w <= 0) break;
        off += w;
      }
    }
    if (console) {
      std::lock_guard<std::mutex> lock(console_mu);
      std::fputs(prefix.c_str(), console);
      std::fputs(line.c_str(), console);
      std::fflush(console);
    }
  };
  while (true) {
    ssize_t n = ::read(from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      flush_line(pending.substr(0, nl + 1));
      pending.erase(0, nl + 1);
    }
  }
  if (!pending.empty()) flush_line(pending + "\n");
  ::close(from);
  if (file_fd >= 0) ::close(file_fd);
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGHUP:
      return "SIGHUP";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGQUIT:
      return "SIGQUIT";
    default:
      return "signal";
  }
}

}  // namespace

std::string signal_message(int sig, pid_t pid) {
  return str("Signal ", sig, " (", signal_name(sig), ") received by PID ", pid);
}

std::string read_error_file(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    auto j = nlohmann::json::parse(ss.str());
    const auto& m = j.at("message");
    if (m.is_string()) return m.get<std::string>();
    std::string text = m.at("message").get<std::string>();
    return text;
  } catch (const std::exception&) {
    return ss.str().substr(0, 2000);
  }
}

WorkerGroup::WorkerGroup(std::vector<WorkerLaunch> workers, std::string host) : host_(std::move(host)) {
  for (auto& w : workers) {
    Proc p;
    p.spec = std::move(w);
    procs_.push_back(std::move(p));
  }
}

WorkerGroup::~WorkerGroup() {
  try {
    stop(SIGKILL, std::chrono::milliseconds(2000));
  } catch (...) {
  }
}

void WorkerGroup::start() {
  const pid_t agent = ::getpid();
  for (Proc& p : procs_) {
    const WorkerLaunch& w = p.spec;
    // Output: -1 = inherit; otherwise the fd the child's stream becomes.
    int out_fd = -1, err_fd = -1;
    int out_pump[2] = {-1, -1}, err_pump[2] = {-1, -1};
    int out_file = -1, err_file = -1;
    auto plan = [&](const std::string& file, bool tee, int(&pipe_fds)[2], int& child_fd, int& file_fd) {
      if (tee) {
        CT_CHECK(::pipe2(pipe_fds, O_CLOEXEC) == 0, "pipe: ", std::strerror(errno));
        child_fd = pipe_fds[1];
        file_fd = file.empty() ? -1 : open_log(file);
      } else if (!file.empty()) {
        child_fd = open_log(file);
      } else if (!w.console) {
        child_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
      }
    };
    plan(w.stdout_file, w.tee_stdout && w.console, out_pump, out_fd, out_file);
    plan(w.stderr_file, w.tee_stderr && w.console, err_pump, err_fd, err_file);

    std::vector<char*> argv, envp;
    for (const auto& a : w.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : w.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    pid_t pid = ::fork();
    CT_CHECK(pid >= 0, "fork: ", std::strerror(errno));
    if (pid == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != agent) ::_exit(1);  // the agent died before prctl took effect
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::signal(SIGTERM, SIG_DFL);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGHUP, SIG_DFL);
      ::signal(SIGPIPE, SIG_DFL);
      if (out_fd >= 0) ::dup2(out_fd, 1);
      if (err_fd >= 0) ::dup2(err_fd, 2);
      ::execve(argv[0], argv.data(), envp.data());
      const char msg[] = "coretrain run: exec of the worker command failed\n";
      ssize_t ignored = ::write(2, msg, sizeof msg - 1);
      (void)ignored;
      ::_exit(127);
    }
    ::setpgid(pid, pid);  // also from the parent: no race with a stop right after start
    p.pid = pid;
    if (out_pump[1] >= 0) {
      ::close(out_pump[1]);
      p.pumps.emplace_back(pump, out_pump[0], out_file, stdout, w.prefix);
    } else if (out_fd >= 0) {
      ::close(out_fd);
    }
    if (err_pump[1] >= 0) {
      ::close(err_pump[1]);
      p.pumps.emplace_back(pump, err_pump[0], err_file, stderr, w.prefix);
    } else if (err_fd >= 0) {
      ::close(err_fd);
    }
  }
}

void WorkerGroup::reap(Proc& p, int status) {
  p.exited = true;
  p.status = status;
  for (auto& t : p.pumps)
    if (t.joinable()) t.join();
  p.pumps.clear();
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (ok) return;
  FailureRecord f;
  f.rank = p.spec.rank;
  f.local_rank = p.spec.local_rank;
  f.host = host_;
  f.pid = p.pid;
  f.time = now_unix();
  f.error_file = p.spec.error_file;
  if (WIFSIGNALED(status)) {
    f.exitcode = -WTERMSIG(status);
    f.message = signal_message(WTERMSIG(status), p.pid);
  } else {
    f.exitcode = WEXITSTATUS(status);
    f.message = read_error_file(p.spec.error_file);
    if (f.message.empty())
      f.message = f.exitcode == 127 ? "the worker command could not be executed" : "(no error file written)";
  }
  failures_.push_back(f);
}

WorkerGroup::State WorkerGroup::poll() {
  for (Proc& p : procs_) {
    if (p.exited || p.pid < 0) continue;
    int status = 0;
    pid_t r = ::waitpid(p.pid, &status, WNOHANG);
    if (r == p.pid) reap(p, status);
  }
  if (!failures_.empty()) return State::failed;
  for (const Proc& p : procs_)
    if (!p.exited) return State::running;
  return State::succeeded;
}

bool WorkerGroup::all_exited() const {
  for (const Proc& p : procs_)
    if (!p.exited && p.pid > 0) return false;
  return true;
}

std::vector<pid_t> WorkerGroup::pids() const {
  std::vector<pid_t> out;
  for (const Proc& p : procs_) out.push_back(p.pid);
  return out;
}

void WorkerGroup::stop(int sig, std::chrono::milliseconds grace) {
  auto wait_all = [&](std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      bool running = false;
      for (Proc& p : procs_) {
        if (p.exited || p.pid < 0) continue;
        int status = 0;
        pid_t r = ::waitpid(p.pid, &status, WNOHANG);
        if (r == p.pid) {
          p.exited = true;
          p.status = status;
          for (auto& t : p.pumps)
            if (t.joinable()) t.join();
          p.pumps.clear();
        } else {
          running = true;
        }
      }
      if (!running || std::chrono::steady_clock::now() >= deadline) return !running;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  };
  for (Proc& p : procs_)
    if (!p.exited && p.pid > 0) ::kill(-p.pid, sig);
  if (sig != SIGKILL && wait_all(grace)) return;
  for (Proc& p : procs_)
    if (!p.exited && p.pid > 0) {
      if (sig != SIGKILL)
        log::warn("worker rank ", p.spec.rank, " (pid ", p.pid, ") did not stop within ",
                  grace.count() / 1000.0, " s: SIGKILL");
      ::kill(-p.pid, SIGKILL);
    }
  wait_all(std::chrono::milliseconds(10000));
}

}  // namespace ct::launch

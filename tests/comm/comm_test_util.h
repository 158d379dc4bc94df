// Helpers shared by the comm tests: ranks as forked processes (env-var launch over a real TCP store and real
// shared memory), ranks as threads (in-memory store), worker threads that fail the test instead of
// terminating it, deterministic inputs and plain references.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "comm/bootstrap.h"
#include "comm/communicator.h"
#include "core/bf16.h"
#include "core/error.h"

namespace ct::comm::test {

// A test's worker thread. What its body throws is kept, not let out: an exception escaping a std::thread
// std::terminate()s the whole test binary ("terminate called recursively" when two threads do it at once)
// instead of failing one test. It is reported as a failure of the current test, naming the thread, when the
// thread is joined: by join(), or by the destructor, which also keeps a main thread that throws mid-test from
// destroying a joinable std::thread (another std::terminate).
class TestThread {
 public:
  TestThread(std::string name, std::function<void()> body)
      : name_(std::move(name)), error_(std::make_shared<std::string>()) {
    thread_ = std::thread([body = std::move(body), error = error_] {
      try {
        body();
      } catch (const std::exception& e) {
        *error = *e.what() ? e.what() : "an exception with an empty message";
      } catch (...) {
        *error = "an exception not derived from std::exception";
      }
    });
  }
  TestThread(TestThread&&) = default;
  TestThread& operator=(TestThread&&) = delete;
  ~TestThread() { join(); }

  // Waits for the body; if it threw, fails the current test with the thread's name and the message.
  void join() {
    if (!thread_.joinable()) return;
    thread_.join();
    if (!error_->empty()) ADD_FAILURE() << name_ << " threw: " << *error_;
  }

 private:
  std::string name_;
  std::shared_ptr<std::string> error_;
  std::thread thread_;
};

inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

struct ChildResult {
  int rank = 0;
  int exit_code = -1;  // -signal when killed
  std::string message;
  std::string stderr_text;  // when ForkJob::capture_stderr
  double seconds = 0;
};

struct ForkJob {
  int world = 1;
  int local_world = -1;  // -1: world
  int port = 0;          // 0: pick
  std::string run_id = "test";
  std::string timeout_s = "20";
  std::vector<std::pair<std::string, std::string>> env;
  bool capture_stderr = false;
};

inline std::string stderr_path(pid_t parent, int rank) {
  return str("/tmp/ct_comm_test_stderr_", parent, "_", rank);
}

// Forks one process per rank with torchrun-style env; body's ct::Error (or any exception) becomes the child's
// message and exit code 1. Each child's message travels back through a pipe. Returns when all children exit
// or after `deadline_s` (stragglers are killed and reported with exit_code -9).
inline std::vector<ChildResult> run_forked(const ForkJob& job, const std::function<void(int)>& body,
                                           double deadline_s = 60, const std::vector<int>& skip = {}) {
  int port = job.port ? job.port : free_port();
  int local_world = job.local_world > 0 ? job.local_world : job.world;
  std::vector<pid_t> pids(job.world, -1);
  std::vector<int> fds(job.world, -1);
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < job.world; ++r) {
    bool skipped = false;
    for (int s : skip) skipped |= s == r;
    if (skipped) continue;
    int p[2];
    if (::pipe(p) != 0) std::abort();
    const pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(p[0]);
      if (job.capture_stderr) {
        FILE* f = std::freopen(stderr_path(parent, r).c_str(), "w", stderr);
        (void)f;
      }
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(job.world).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(r % local_world).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(local_world).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("TORCHELASTIC_RUN_ID", job.run_id.c_str(), 1);
      ::setenv("CORETRAIN_COMM_TIMEOUT", job.timeout_s.c_str(), 1);
      for (auto& [k, v] : job.env) ::setenv(k.c_str(), v.c_str(), 1);
      int code = 0;
      std::string msg;
      try {
        body(r);
      } catch (const std::exception& e) {
        msg = e.what();
        code = 1;
      }
      if (!msg.empty()) {
        ssize_t w = ::write(p[1], msg.data(), msg.size());
        (void)w;
      }
      ::close(p[1]);
      ::_exit(code);
    }
    ::close(p[1]);
    pids[r] = pid;
    fds[r] = p[0];
  }
  std::vector<ChildResult> out(job.world);
  for (int r = 0; r < job.world; ++r) out[r].rank = r;
  int left = 0;
  for (pid_t p : pids) left += p > 0;
  while (left > 0) {
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int r = 0; r < job.world; ++r) {
      if (pids[r] <= 0) continue;
      int st = 0;
      pid_t w = ::waitpid(pids[r], &st, el > deadline_s ? 0 : WNOHANG);
      if (w == 0) {
        if (el > deadline_s) ::kill(pids[r], SIGKILL);
        continue;
      }
      out[r].exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
      out[r].seconds = el;
      char buf[4096];
      ssize_t n;
      while ((n = ::read(fds[r], buf, sizeof(buf))) > 0) out[r].message.append(buf, static_cast<size_t>(n));
      ::close(fds[r]);
      if (job.capture_stderr) {
        std::string path = stderr_path(::getpid(), r);
        if (FILE* f = std::fopen(path.c_str(), "r")) {
          while (size_t got = std::fread(buf, 1, sizeof(buf), f)) out[r].stderr_text.append(buf, got);
          std::fclose(f);
        }
        std::remove(path.c_str());
      }
      pids[r] = -1;
      --left;
    }
    if (el > deadline_s)
      for (int r = 0; r < job.world; ++r)
        if (pids[r] > 0) ::kill(pids[r], SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return out;
}

// Ranks as threads over one in-memory store (each thread its own Communicator, real shared memory).
inline void run_threads(int world, int local_world, const std::function<void(Communicator&)>& body,
                        CommOptions opts = {}, const std::string& run_id = "threads") {
  auto store = make_memory_store();
  std::vector<std::thread> ts;
  std::vector<std::string> errors(world);
  if (opts.timeout.count() == 0) opts.timeout = std::chrono::seconds(20);
  for (int r = 0; r < world; ++r) {
    ts.emplace_back([&, r] {
      try {
        LaunchInfo info;
        info.launcher = world > 1 ? Launcher::env : Launcher::single;
        info.size = world;
        info.rank = r;
        info.local_size = local_world;
        info.local_rank = r % local_world;
        info.node = r / local_world;
        info.num_nodes = world / local_world;
        info.run_id = run_id;
        auto boot = Bootstrap::from_store(info, store, opts.timeout);
        auto comm = make_communicator(boot, opts);
        body(*comm);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : ts) t.join();
  for (int r = 0; r < world; ++r)
    if (!errors[r].empty()) throw Error(str("rank ", r, ": ", errors[r]));
}

// Input element i of rank r: varied signs and magnitudes so that sums round and max/min differ per rank.
inline float input_value(int r, int64_t i) {
  uint32_t h = static_cast<uint32_t>(i) * 2654435761u + static_cast<uint32_t>(r + 1) * 40503u;
  h ^= h >> 13;
  return (static_cast<float>(h % 20001) - 10000.f) / 997.f + static_cast<float>(r) * 0.37f;
}

inline std::vector<float> inputs_f32(int r, int64_t n, int64_t offset = 0) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = input_value(r, i + offset);
  return v;
}
inline std::vector<bf16> inputs_bf16(int r, int64_t n, int64_t offset = 0) {
  std::vector<bf16> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = to_bf16(input_value(r, i + offset));
  return v;
}

// Reference reduction over ranks 0..world-1 in rank order, in f32 (bf16 inputs widened, result rounded once).
inline float ref_reduce(int world, int64_t i, ReduceOp op, bool bf, int64_t offset = 0) {
  auto x = [&](int r) {
    return bf ? to_f32(to_bf16(input_value(r, i + offset))) : input_value(r, i + offset);
  };
  float v = x(0);
  for (int r = 1; r < world; ++r) {
    float y = x(r);
    if (op == ReduceOp::max)
      v = v > y ? v : y;
    else if (op == ReduceOp::min)
      v = v < y ? v : y;
    else
      v = v + y;
  }
  if (op == ReduceOp::avg) v = v / static_cast<float>(world);
  return bf ? to_f32(to_bf16(v)) : v;
}

}  // namespace ct::comm::test

namespace ct::comm::test {

inline bool same_value(float got, float want, bool bf, bool exact, float scale) {
  if (exact) return std::memcmp(&got, &want, 4) == 0;
  float tol = (bf ? 2.f / 128.f : 1e-5f) * (std::fabs(want) + scale);
  return std::fabs(got - want) <= tol;
}

template <class T>
float as_f32(T v) {
  if constexpr (std::is_same_v<T, bf16>)
    return to_f32(v);
  else
    return v;
}

// Every collective x dtype x op on every size against the plain reference; throws naming the first mismatch.
// exact: one node (bit-identical); otherwise per-stage rounding / node-first summation allowed.
inline void verify_collectives(Communicator& c, const std::vector<int64_t>& sizes, bool exact,
                               bool shared = false) {
  const int world = c.size(), me = c.rank();
  const ReduceOp ops[] = {ReduceOp::sum, ReduceOp::avg, ReduceOp::max, ReduceOp::min};
  auto check = [&](const char* what, DType dt, ReduceOp op, int64_t n, int64_t i, float got, float want) {
    bool bf = dt == DType::bf16;
    bool ex = exact || op == ReduceOp::max || op == ReduceOp::min;
    if (!same_value(got, want, bf, ex, 10.f * world))
      fail(what, " ", dtype_name(dt), " ", reduce_op_name(op), " n=", n, " ranks=", world, ": rank ", me,
           " element ", i, " is ", got, ", expected ", want);
  };
  for (DType dt : {DType::f32, DType::bf16}) {
    const bool bf = dt == DType::bf16;
    const int64_t esz = dtype_size(dt);
    auto fill = [&](void* p, int r, int64_t n, int64_t off) {
      if (n == 0) return;
      if (bf) {
        auto v = inputs_bf16(r, n, off);
        std::memcpy(p, v.data(), n * esz);
      } else {
        auto v = inputs_f32(r, n, off);
        std::memcpy(p, v.data(), n * esz);
      }
    };
    auto get = [&](const void* p, int64_t i) {
      return bf ? to_f32(static_cast<const bf16*>(p)[i]) : static_cast<const float*>(p)[i];
    };
    auto input = [&](int r, int64_t i) {
      return bf ? to_f32(to_bf16(input_value(r, i))) : input_value(r, i);
    };
    for (int64_t n : sizes) {
      std::vector<uint8_t> own(static_cast<size_t>(std::max<int64_t>(n, 1) * esz));
      for (ReduceOp op : ops) {
        void* buf = shared ? c.shm_alloc(n * esz) : own.data();
        fill(buf, me, n, 0);
        c.allreduce(buf, n, dt, {op, {}});
        for (int64_t i = 0; i < n; ++i)
          check("allreduce", dt, op, n, i, get(buf, i), ref_reduce(world, i, op, bf));
      }
      if (shared) continue;
      std::vector<uint8_t> big(static_cast<size_t>(std::max<int64_t>(n * world, 1) * esz));
      for (ReduceOp op : ops) {
        fill(big.data(), me, n * world, 0);
        c.reduce_scatter(big.data(), own.data(), n, dt, {op, {}});
        for (int64_t i = 0; i < n; ++i)
          check("reduce_scatter", dt, op, n, i, get(own.data(), i), ref_reduce(world, me * n + i, op, bf));
      }
      fill(own.data(), me, n, 0);
      c.allgather(own.data(), big.data(), n, dt);
      for (int j = 0; j < world; ++j)
        for (int64_t i = 0; i < n; ++i)
          check("allgather", dt, ReduceOp::max, n, j * n + i, get(big.data(), j * n + i), input(j, i));
      std::vector<uint8_t> recv(big.size());
      fill(big.data(), me, n * world, 0);
      c.alltoall(big.data(), recv.data(), n, dt);
      for (int j = 0; j < world; ++j)
        for (int64_t i = 0; i < n; ++i)
          check("alltoall", dt, ReduceOp::max, n, j * n + i, get(recv.data(), j * n + i),
                input(j, me * n + i));
      const int root = world - 1;
      if (me == root)
        fill(own.data(), me, n, 0);
      else
        std::memset(own.data(), 0, own.size());
      c.broadcast(own.data(), n, dt, {root, {}});
      for (int64_t i = 0; i < n; ++i)
        check("broadcast", dt, ReduceOp::max, n, i, get(own.data(), i), input(root, i));
      c.barrier();
    }
  }
}

}  // namespace ct::comm::test

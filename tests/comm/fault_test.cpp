// Faults with real processes: a rank killed mid-collective, a rank that never arrives, a rank that is late
// past the timeout, mismatched ops, two jobs on one host at once, a crashed job's leftover shared memory, a
// port in use and an unresolvable MASTER_ADDR. Every case must end (no hang) with errors that name the
// culprit.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "comm/shm_segment.h"
#include "comm_test_util.h"

namespace ct::comm::test {
namespace {

bool shm_exists(const std::string& name) {
  struct stat st {};
  return ::stat(("/dev/shm" + name).c_str(), &st) == 0;
}

TEST(Faults, KilledRankFailsTheOthersNamingIt) {
  ForkJob job;
  job.world = 3;
  job.run_id = "kill";
  job.timeout_s = "20";
  auto res = run_forked(
      job,
      [](int rank) {
        auto c = make_communicator();
        if (rank == 1)
          std::thread([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            ::raise(SIGKILL);
          }).detach();
        std::vector<float> v(1 << 20, 1.f);
        for (int it = 0; it < 100000; ++it)
          c->allreduce(v.data(), static_cast<int64_t>(v.size()), DType::f32);
      },
      /*deadline_s=*/30);
  EXPECT_EQ(res[1].exit_code, -SIGKILL);
  for (int r : {0, 2}) {
    EXPECT_EQ(res[r].exit_code, 1) << res[r].message;
    EXPECT_NE(res[r].message.find("rank 1"), std::string::npos) << res[r].message;
    EXPECT_NE(res[r].message.find("allreduce"), std::string::npos) << res[r].message;
  }
}

TEST(Faults, RankThatNeverArrivesTimesOutTheBootstrapNamingIt) {
  ForkJob job;
  job.world = 3;
  job.run_id = "absent";
  job.timeout_s = "1.5";
  auto res = run_forked(job, [](int) { make_communicator(); }, 30, /*skip=*/{2});
  for (int r : {0, 1}) {
    EXPECT_EQ(res[r].exit_code, 1) << res[r].message;
    EXPECT_NE(res[r].message.find("bootstrap: "), std::string::npos) << res[r].message;
    EXPECT_NE(res[r].message.find("rank(s) 2 of 3"), std::string::npos) << res[r].message;
  }
}

TEST(Faults, LateRankTimesOutNamingOpSequenceAndRank) {
  ForkJob job;
  job.world = 2;
  job.run_id = "late";
  job.timeout_s = "1.0";
  job.capture_stderr = true;
  auto res = run_forked(job, [](int rank) {
    auto c = make_communicator();
    std::vector<float> v(100, 1.f);
    c->allreduce(v.data(), 100, DType::f32);  // op #1 succeeds
    if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    c->allreduce(v.data(), 100,
                 DType::f32);  // rank 1 may still complete this one: rank 0 had posted its data
    c->allreduce(v.data(), 100, DType::f32);
  });
  EXPECT_EQ(res[0].exit_code, 1);
  EXPECT_NE(res[0].message.find("shm allreduce #2"), std::string::npos) << res[0].message;
  EXPECT_NE(res[0].message.find("timed out after"), std::string::npos) << res[0].message;
  EXPECT_NE(res[0].message.find("not arrived: 1"), std::string::npos) << res[0].message;
  // The stall warning came first, at half the timeout.
  EXPECT_NE(res[0].stderr_text.find("rank(s) 1 (still at op #1) have not joined"), std::string::npos)
      << res[0].stderr_text;
  // The late one finds its peer's failure posted instead of waiting out its own timeout.
  EXPECT_EQ(res[1].exit_code, 1);
  EXPECT_NE(res[1].message.find("rank 0"), std::string::npos) << res[1].message;
}

TEST(Faults, MismatchedOpsAreReportedNotCorrupted) {
  ForkJob job;
  job.world = 2;
  job.run_id = "mismatch";
  job.timeout_s = "10";
  auto res = run_forked(job, [](int rank) {
    auto c = make_communicator();
    std::vector<float> v(200, 1.f);
    c->allreduce(v.data(), rank == 0 ? 100 : 101, DType::f32);
  });
  for (int r : {0, 1}) {
    EXPECT_EQ(res[r].exit_code, 1);
    EXPECT_NE(res[r].message.find("ops differ"), std::string::npos) << res[r].message;
    EXPECT_NE(res[r].message.find("count=100"), std::string::npos) << res[r].message;
    EXPECT_NE(res[r].message.find("count=101"), std::string::npos) << res[r].message;
  }
  res = run_forked(job, [](int rank) {
    auto c = make_communicator();
    std::vector<float> v(200, 1.f);
    if (rank == 0)
      c->allreduce(v.data(), 100, DType::f32);
    else
      c->broadcast(v.data(), 100, DType::f32);
  });
  for (int r : {0, 1}) {
    EXPECT_EQ(res[r].exit_code, 1);
    EXPECT_NE(res[r].message.find("broadcast(count=100"), std::string::npos) << res[r].message;
  }
}

TEST(Faults, TwoJobsOnOneHostDoNotInterfere) {
  // Same run id on purpose: only the rendezvous nonce keeps their segments apart.
  std::vector<pid_t> jobs;
  for (int j = 0; j < 2; ++j) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ForkJob job;
      job.world = 2;
      job.run_id = "twin";
      auto res = run_forked(job, [j](int rank) {
        auto c = make_communicator();
        for (int it = 0; it < 20; ++it) {
          int64_t off = j * 100000 + it;
          auto v = inputs_f32(rank, 30001, off);
          c->allreduce(v.data(), 30001, DType::f32);
          for (int64_t i = 0; i < 30001; i += 101)
            if (v[i] != ref_reduce(2, i, ReduceOp::sum, false, off)) fail("job ", j, " got a foreign result");
        }
      });
      bool ok = res[0].exit_code == 0 && res[1].exit_code == 0;
      if (!ok) std::fprintf(stderr, "job %d: %s | %s\n", j, res[0].message.c_str(), res[1].message.c_str());
      ::_exit(ok ? 0 : 1);
    }
    jobs.push_back(pid);
  }
  for (pid_t p : jobs) {
    int st = 0;
    ::waitpid(p, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
}

TEST(Faults, LeftoverSegmentOfCrashedJobIsRemovedAtNextStart) {
  std::string dead_name = str("/ct-leftover-", ::getpid(), "-dead");
  std::string live_name = str("/ct-leftover-", ::getpid(), "-live");
  pid_t pid = ::fork();
  if (pid == 0) {
    auto seg = ShmSegment::create(dead_name, 4096);
    ::raise(SIGKILL);  // crash without unlinking
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  ASSERT_TRUE(shm_exists(dead_name));
  auto live = ShmSegment::create(live_name, 4096);  // ours, alive: must survive the sweep
  ForkJob job;
  job.world = 2;
  job.run_id = "sweep";
  auto res = run_forked(job, [](int) {
    auto c = make_communicator();
    c->barrier();
  });
  for (auto& r : res) EXPECT_EQ(r.exit_code, 0) << r.message;
  EXPECT_FALSE(shm_exists(dead_name));
  EXPECT_TRUE(shm_exists(live_name));
}

TEST(Faults, JobsLeaveNoSharedMemoryBehind) {
  ForkJob job;
  job.world = 3;
  job.run_id = "clean-exit-check";
  auto res = run_forked(job, [](int) {
    auto c = make_communicator();
    void* p = c->shm_alloc(1 << 16);
    std::memset(p, 0, 1 << 16);
    c->allreduce(p, 1 << 14, DType::f32);
  });
  for (auto& r : res) EXPECT_EQ(r.exit_code, 0) << r.message;
  for (auto& name : remove_leftover_segments())
    EXPECT_EQ(name.find("clean-exit-check"), std::string::npos) << name;
  EXPECT_EQ(std::system("ls /dev/shm | grep -q clean-exit-check"), 256);
}

TEST(Faults, PortInUseAndBadMasterAddr) {
  int port = free_port();
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(static_cast<uint16_t>(port));
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ForkJob job;
  job.world = 2;
  job.port = port;
  job.timeout_s = "1";
  auto res = run_forked(job, [](int) { make_communicator(); }, 30, {1});
  ::close(fd);
  EXPECT_EQ(res[0].exit_code, 1);
  EXPECT_NE(res[0].message.find(str("port ", port, " is already in use")), std::string::npos)
      << res[0].message;

  job.port = 0;
  job.env = {{"MASTER_ADDR", "no-such-host.invalid"}};
  res = run_forked(job, [](int) { make_communicator(); }, 30, {1});
  EXPECT_EQ(res[0].exit_code, 1);
  EXPECT_NE(res[0].message.find("MASTER_ADDR 'no-such-host.invalid'"), std::string::npos) << res[0].message;

  // Nobody hosts the store: a client gives up at the timeout naming host:port.
  job.env = {};
  job.port = free_port();
  res = run_forked(job, [](int) { make_communicator(); }, 30, {0});
  EXPECT_EQ(res[1].exit_code, 1);
  EXPECT_NE(res[1].message.find(str("could not connect to 127.0.0.1:", job.port)), std::string::npos)
      << res[1].message;
}

}  // namespace
// A segment larger than what /dev/shm has free is refused at creation with a one-line error naming /dev/shm
// and the fix, not left to fault (SIGBUS) when its pages are first touched.
TEST(ShmSegmentSpace, TooLargeForDevShmIsRefusedUpFront) {
  struct statvfs fs {};
  ASSERT_EQ(::statvfs("/dev/shm", &fs), 0);
  const size_t free_bytes = static_cast<size_t>(fs.f_bavail) * fs.f_frsize;
  const std::string name = "/ct-space-test-" + std::to_string(::getpid());
  try {
    ShmSegment::create(name, free_bytes + (size_t{64} << 20));
    ADD_FAILURE() << "no error";
  } catch (const ct::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("/dev/shm has"), std::string::npos) << m;
    EXPECT_NE(m.find("--shm-size"), std::string::npos) << m;
  }
  struct stat st {};
  EXPECT_NE(::stat(("/dev/shm" + name).c_str(), &st), 0);  // nothing left behind
}

}  // namespace ct::comm::test

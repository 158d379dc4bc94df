// What the agent gives its workers and prints: torchrun's environment per local rank, the command a worker
// runs, and torchrun's failure summary with the root cause first.
#include "launch/agent.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "launch/worker_group.h"

namespace ct::launch {
namespace {

Round two_nodes(int group_rank) {
  Round r;
  r.number = 3;
  r.group_rank = group_rank;
  r.failures = 2;
  NodeInfo a, b;
  a.nproc = b.nproc = 2;
  r.nodes = {a, b};
  return r;
}

TEST(AgentEnv, TorchrunVariablesForEachWorker) {
  LaunchArgs args = parse_launch_args({"--max-restarts", "5", "--rdzv-id", "job", "qa"},
                                      [](const char*) -> const char* { return nullptr; });
  auto e = worker_env(args, two_nodes(1), 1, "node0", 29400, "/tmp/err.json", 4);
  EXPECT_EQ(e["RANK"], "3");
  EXPECT_EQ(e["LOCAL_RANK"], "1");
  EXPECT_EQ(e["GROUP_RANK"], "1");
  EXPECT_EQ(e["ROLE_RANK"], "3");
  EXPECT_EQ(e["ROLE_NAME"], "default");
  EXPECT_EQ(e["LOCAL_WORLD_SIZE"], "2");
  EXPECT_EQ(e["WORLD_SIZE"], "4");
  EXPECT_EQ(e["GROUP_WORLD_SIZE"], "2");
  EXPECT_EQ(e["ROLE_WORLD_SIZE"], "4");
  EXPECT_EQ(e["MASTER_ADDR"], "node0");
  EXPECT_EQ(e["MASTER_PORT"], "29400");
  EXPECT_EQ(e["TORCHELASTIC_RESTART_COUNT"], "2");
  EXPECT_EQ(e["TORCHELASTIC_MAX_RESTARTS"], "5");
  EXPECT_EQ(e["TORCHELASTIC_RUN_ID"], "job");
  EXPECT_EQ(e["TORCHELASTIC_USE_AGENT_STORE"], "True");
  EXPECT_EQ(e["TORCHELASTIC_ERROR_FILE"], "/tmp/err.json");
  EXPECT_EQ(e["CORETRAIN_RDZV_ROUND"], "3");
  EXPECT_EQ(e["OMP_NUM_THREADS"], "4");
  EXPECT_EQ(worker_env(args, two_nodes(0), 0, "a", 1, "", 0).count("OMP_NUM_THREADS"), 0u);
}

TEST(AgentCommand, CoretrainCommandsRunThisExecutable) {
  AgentHost h;
  h.self_exe = "/opt/ct/coretrain";
  h.is_subcommand = [](const std::string& c) { return c == "qa"; };
  h.env = [](const char* k) -> const char* { return std::string(k) == "PATH" ? "/usr/bin:/bin" : nullptr; };
  auto none = [](const char*) -> const char* { return nullptr; };
  EXPECT_EQ(resolve_worker_command(parse_launch_args({"qa", "--x"}, none), h),
            (std::vector<std::string>{"/opt/ct/coretrain", "qa", "--x"}));
  EXPECT_EQ(resolve_worker_command(parse_launch_args({"coretrain", "qa"}, none), h),
            (std::vector<std::string>{"/opt/ct/coretrain", "qa"}));
  EXPECT_EQ(resolve_worker_command(parse_launch_args({"train.py", "--a"}, none), h),
            (std::vector<std::string>{"/usr/bin/python3", "-u", "train.py", "--a"}));
  EXPECT_EQ(resolve_worker_command(parse_launch_args({"--no-python", "true"}, none), h)[0], "/usr/bin/true");
  try {
    resolve_worker_command(parse_launch_args({"no-such-program-xyz"}, none), h);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-program-xyz"), std::string::npos);
  }
}

TEST(AgentSummary, RootCauseFirstAsTorchrunPrintsIt) {
  FailureRecord killed, errored;
  killed.rank = 1;
  killed.local_rank = 1;
  killed.host = "nodeB";
  killed.pid = 4242;
  killed.exitcode = -9;
  killed.time = 1000;
  killed.message = signal_message(9, 4242);
  errored.rank = 0;
  errored.local_rank = 0;
  errored.host = "nodeA";
  errored.pid = 4141;
  errored.exitcode = 1;
  errored.time = 1001;
  errored.error_file = "/tmp/e.json";
  errored.message = "rank 1 closed the connection";
  std::string s = failure_summary("coretrain qa", {killed, errored});
  EXPECT_NE(s.find("coretrain qa FAILED"), std::string::npos) << s;
  size_t root = s.find("Root Cause (first observed failure):");
  ASSERT_NE(root, std::string::npos) << s;
  EXPECT_NE(s.find("Signal 9 (SIGKILL) received by PID 4242", root), std::string::npos) << s;
  EXPECT_NE(s.find("rank      : 1 (local_rank: 1)", root), std::string::npos) << s;
  EXPECT_NE(s.find("exitcode  : -9 (pid: 4242)", root), std::string::npos) << s;
  EXPECT_NE(s.find("host      : nodeB", root), std::string::npos) << s;
  EXPECT_LT(s.find("rank 1 closed the connection"), root) << s;  // the other failure, listed above
  EXPECT_EQ(failure_summary("x", {killed}).find("<NO_OTHER_FAILURES>") != std::string::npos, true);
}

}  // namespace
}  // namespace ct::launch

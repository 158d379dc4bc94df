// Bootstrap: launcher detection and validation from fake environments (mpirun MPICH/Open MPI, torchrun,
// single), node membership from local-rank info, and the store rendezvous naming ranks that never come.
#include "comm/bootstrap.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "comm_test_util.h"
#include "core/error.h"

namespace ct::comm {
namespace {

LaunchInfo parse(const std::map<std::string, std::string>& env) {
  return parse_launch_env([&](const char* k) -> const char* {
    auto it = env.find(k);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::string error_of(const std::map<std::string, std::string>& env) {
  try {
    parse(env);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Bootstrap, Single) {
  auto i = parse({});
  EXPECT_EQ(i.launcher, Launcher::single);
  EXPECT_EQ(i.size, 1);
}

TEST(Bootstrap, MpichHydra) {
  auto i = parse({{"PMI_RANK", "3"},
                  {"PMI_SIZE", "4"},
                  {"MPI_LOCALRANKID", "1"},
                  {"MPI_LOCALNRANKS", "2"},
                  {"RANK", "0"},
                  {"WORLD_SIZE", "9"}});
  EXPECT_EQ(i.launcher, Launcher::mpi);
  EXPECT_EQ(i.rank, 3);
  EXPECT_EQ(i.size, 4);
  EXPECT_EQ(i.local_rank, 1);
  EXPECT_EQ(i.local_size, 2);
  EXPECT_EQ(i.node, 1);
  EXPECT_EQ(i.num_nodes, 2);
}

TEST(Bootstrap, OpenMpi) {
  auto i = parse({{"OMPI_COMM_WORLD_RANK", "2"},
                  {"OMPI_COMM_WORLD_SIZE", "3"},
                  {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                  {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}});
  EXPECT_EQ(i.launcher, Launcher::mpi);
  EXPECT_EQ(i.rank, 2);
  EXPECT_EQ(i.node, 2);
  EXPECT_EQ(i.num_nodes, 3);
}

TEST(Bootstrap, Torchrun) {
  auto i = parse({{"RANK", "5"},
                  {"WORLD_SIZE", "8"},
                  {"LOCAL_RANK", "1"},
                  {"LOCAL_WORLD_SIZE", "4"},
                  {"MASTER_ADDR", "10.0.0.1"},
                  {"MASTER_PORT", "29500"},
                  {"TORCHELASTIC_RUN_ID", "abc"},
                  {"TORCHELASTIC_RESTART_COUNT", "2"},
                  {"TORCHELASTIC_USE_AGENT_STORE", "True"}});
  EXPECT_EQ(i.launcher, Launcher::env);
  EXPECT_EQ(i.node, 1);
  EXPECT_EQ(i.num_nodes, 2);
  EXPECT_EQ(i.master_addr, "10.0.0.1");
  EXPECT_EQ(i.master_port, 29500);
  EXPECT_EQ(i.run_id, "abc.r2");
  EXPECT_TRUE(i.agent_store);
  EXPECT_EQ(i.rdzv_round, -1);  // not launched by `coretrain run`
  auto with_round = parse({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"CORETRAIN_RDZV_ROUND", "3"}});
  EXPECT_EQ(with_round.rdzv_round, 3);
  // A PyTorchJob pod: RANK/WORLD_SIZE only, one process per "node".
  auto p = parse({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "m"}, {"MASTER_PORT", "1234"}});
  EXPECT_EQ(p.local_size, 1);
  EXPECT_EQ(p.node, 1);
}

TEST(Bootstrap, BadEnvironmentsGiveOneLineErrors) {
  std::map<std::string, std::string> ok = {{"RANK", "1"},        {"WORLD_SIZE", "4"},
                                           {"LOCAL_RANK", "1"},  {"LOCAL_WORLD_SIZE", "2"},
                                           {"MASTER_ADDR", "h"}, {"MASTER_PORT", "29500"}};
  EXPECT_EQ(error_of(ok), "");
  auto with = [&](const std::string& k, const std::string& v) {
    auto e = ok;
    if (v.empty())
      e.erase(k);
    else
      e[k] = v;
    return error_of(e);
  };
  EXPECT_NE(with("WORLD_SIZE", "0").find("WORLD_SIZE=0 out of range"), std::string::npos);
  EXPECT_NE(with("RANK", "4").find("RANK=4 out of range 0..3"), std::string::npos);
  EXPECT_NE(with("RANK", "x").find("RANK='x' is not an integer"), std::string::npos);
  EXPECT_NE(with("LOCAL_WORLD_SIZE", "3").find("does not divide WORLD_SIZE=4"), std::string::npos);
  EXPECT_NE(with("LOCAL_RANK", "0").find("should have LOCAL_RANK=1"), std::string::npos);
  EXPECT_NE(with("MASTER_ADDR", "").find("MASTER_ADDR is not set"), std::string::npos);
  EXPECT_NE(with("MASTER_PORT", "70000").find("MASTER_PORT=70000 out of range"), std::string::npos);
  EXPECT_NE(with("CORETRAIN_RDZV_ROUND", "x").find("CORETRAIN_RDZV_ROUND='x' is not an integer"),
            std::string::npos);
  EXPECT_NE(error_of({{"PMI_RANK", "2"}, {"PMI_SIZE", "2"}}).find("PMI_RANK=2 out of range"),
            std::string::npos);
  for (auto& [k, v] : std::map<std::string, std::string>{{"WORLD_SIZE", "0"}, {"RANK", "9"}})
    EXPECT_EQ(with(k, v).find('\n'), std::string::npos);
}

TEST(Bootstrap, NodesFromLocalRanks) {
  EXPECT_EQ(nodes_from_local_ranks({0, 1, 0, 1}, {2, 2, 2, 2}), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(nodes_from_local_ranks({0, 1, 0}, {2, 2, 1}), (std::vector<int>{0, 0, 1}));
  EXPECT_THROW(nodes_from_local_ranks({0, 0, 1, 1}, {2, 2, 2, 2}), Error);  // round-robin placement
  EXPECT_THROW(nodes_from_local_ranks({0, 1, 0}, {2, 2, 2}), Error);        // node cut short
}

TEST(Bootstrap, StoreRendezvousNamesAbsentRanks) {
  auto store = make_memory_store();
  std::vector<std::string> errors(2);
  std::vector<test::TestThread> ts;
  for (int r = 0; r < 2; ++r)
    ts.emplace_back(str("rank ", r, " thread"), [&, r] {
      LaunchInfo info;
      info.launcher = Launcher::env;
      info.size = 4;
      info.rank = r;
      info.num_nodes = 4;
      info.node = r;
      try {
        Bootstrap::from_store(info, store, std::chrono::milliseconds(300));
      } catch (const Error& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : ts) t.join();
  for (auto& e : errors) EXPECT_NE(e.find("rank(s) 2,3 of 4"), std::string::npos) << e;
}

// torchrun's static rendezvous: the launcher hosts the store (TORCHELASTIC_USE_AGENT_STORE=True: rank 0 must
// not bind MASTER_PORT, it is taken), and `coretrain run`'s rendezvous round is part of the key prefix.
TEST(Bootstrap, AgentStoreKeysCarryTheRendezvousRound) {
  TcpStoreServer agent(0);
  test::ForkJob job;
  job.world = 2;
  job.port = agent.port();
  job.run_id = "job7";
  job.env = {{"TORCHELASTIC_USE_AGENT_STORE", "True"},
             {"TORCHELASTIC_RESTART_COUNT", "1"},
             {"CORETRAIN_RDZV_ROUND", "3"}};
  auto res = test::run_forked(job, [](int) { Bootstrap::from_env(std::chrono::seconds(20)); });
  for (auto& r : res) EXPECT_EQ(r.exit_code, 0) << "rank " << r.rank << ": " << r.message;
  auto c = connect_tcp_store("127.0.0.1", agent.port(), std::chrono::seconds(2));
  EXPECT_TRUE(c->check({"ct/job7.r1.round3/g0/arrive/0", "ct/job7.r1.round3/g0/arrive/1"}));
}

TEST(Bootstrap, AllRanksAgreeOnNonce) {
  auto store = make_memory_store();
  std::vector<uint64_t> nonce(3);
  std::vector<test::TestThread> ts;
  for (int r = 0; r < 3; ++r)
    ts.emplace_back(str("rank ", r, " thread"), [&, r] {
      LaunchInfo info;
      info.launcher = Launcher::env;
      info.size = 3;
      info.rank = r;
      auto b = Bootstrap::from_store(info, store, std::chrono::seconds(5));
      nonce[r] = b->nonce();
      auto all = b->allgather_string(std::to_string(r * 10), "t", std::chrono::seconds(5));
      EXPECT_EQ(all, (std::vector<std::string>{"0", "10", "20"}));
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(nonce[0], nonce[1]);
  EXPECT_EQ(nonce[1], nonce[2]);
}

TEST(Bootstrap, RanksDisagreeingOnTheirNodeLayoutAreNamedAtOnce) {
  // Rank 0 says 2 ranks per node, rank 1 says 1: each is consistent alone; together they would wait out the
  // timeout on node segments the other never joins.
  auto store = make_memory_store();
  std::vector<std::string> errors(2);
  std::vector<test::TestThread> ts;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < 2; ++r)
    ts.emplace_back(str("rank ", r, " thread"), [&, r] {
      LaunchInfo info;
      info.launcher = Launcher::env;
      info.size = 2;
      info.rank = r;
      info.local_size = r == 0 ? 2 : 1;
      try {
        Bootstrap::from_store(info, store, std::chrono::seconds(30));
      } catch (const Error& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(15));
  for (const auto& e : errors) {
    EXPECT_NE(e.find("disagree on LOCAL_RANK/LOCAL_WORLD_SIZE"), std::string::npos) << e;
    EXPECT_NE(e.find("rank 1: 0/1"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace ct::comm

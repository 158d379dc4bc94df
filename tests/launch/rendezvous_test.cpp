// The rendezvous rules with threads as agents on one in-memory store: when a round closes (max reached; min
// reached and last call over), how it fails (join timeout: who joined from where), restarts (first proposer
// wins, failures counted, scale-ups not), late joiners waiting for the next round, a silent node ending the
// round, static ordering by node rank.
#include "launch/rendezvous.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "comm/store.h"
#include "core/error.h"

namespace ct::launch {
namespace {

using std::chrono::milliseconds;

RendezvousSettings settings(int min_nodes, int max_nodes) {
  RendezvousSettings s;
  s.run_id = "test";
  s.min_nodes = min_nodes;
  s.max_nodes = max_nodes;
  s.join_timeout = milliseconds(5000);
  s.last_call = milliseconds(300);
  s.keep_alive_interval = milliseconds(100);
  s.keep_alive_max_attempt = 5;  // 0.5 s of silence: robust to a loaded machine, short for the lost-node test
  s.poll = milliseconds(5);
  return s;
}

NodeInfo node(const std::string& name, int node_rank = -1) {
  NodeInfo n;
  n.agent_id = name + "-id";
  n.host = name;
  n.addr = "10.0.0." + name.substr(name.size() - 1);
  n.nproc = 2;
  n.node_rank = node_rank;
  return n;
}

TEST(Rendezvous, ClosesAtMaxWithoutWaitingForLastCall) {
  auto store = comm::make_memory_store();
  auto s = settings(2, 3);
  s.last_call = milliseconds(60000);
  RendezvousCoordinator coord(store, s);
  std::vector<std::future<Round>> joins;
  std::vector<std::unique_ptr<Rendezvous>> agents;
  for (int i = 0; i < 3; ++i) agents.push_back(std::make_unique<Rendezvous>(store, s, node(str("n", i))));
  auto t0 = std::chrono::steady_clock::now();
  for (auto& a : agents) joins.push_back(std::async(std::launch::async, [&a] { return a->join(); }));
  std::vector<Round> rounds;
  for (auto& j : joins) rounds.push_back(j.get());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(3000));
  std::set<int> ranks;
  for (const auto& r : rounds) {
    EXPECT_EQ(r.number, 0);
    EXPECT_EQ(r.nodes.size(), 3u);
    EXPECT_EQ(r.world_size(), 6);
    EXPECT_EQ(r.failures, 0);
    ranks.insert(r.group_rank);
    EXPECT_EQ(r.nodes[static_cast<size_t>(r.group_rank)].agent_id,
              r.nodes[static_cast<size_t>(r.group_rank)].agent_id);
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2}));
  // Every participant sees the same order.
  for (const auto& r : rounds)
    for (size_t g = 0; g < 3; ++g) EXPECT_EQ(r.nodes[g].agent_id, rounds[0].nodes[g].agent_id);
}

TEST(Rendezvous, ClosesWithMinAfterLastCall) {
  auto store = comm::make_memory_store();
  auto s = settings(2, 4);
  RendezvousCoordinator coord(store, s);
  Rendezvous a(store, s, node("n0")), b(store, s, node("n1"));
  auto t0 = std::chrono::steady_clock::now();
  auto fa = std::async(std::launch::async, [&] { return a.join(); });
  Round rb = b.join();
  Round ra = fa.get();
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, milliseconds(300));
  EXPECT_EQ(ra.nodes.size(), 2u);
  EXPECT_NE(ra.group_rank, rb.group_rank);
}

TEST(Rendezvous, JoinTimeoutSaysWhoJoinedFromWhere) {
  auto store = comm::make_memory_store();
  auto s = settings(2, 2);
  s.join_timeout = milliseconds(300);
  RendezvousCoordinator coord(store, s);
  Rendezvous a(store, s, node("n7"));
  try {
    a.join();
    FAIL() << "joined alone although min is 2";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("1 of min 2"), std::string::npos) << m;
    EXPECT_NE(m.find("n7 (10.0.0.7)"), std::string::npos) << m;
    EXPECT_NE(m.find("join_timeout"), std::string::npos) << m;
  }
}

TEST(Rendezvous, RestartsFirstProposerWinsFailuresCounted) {
  auto store = comm::make_memory_store();
  auto s = settings(2, 2);
  RendezvousCoordinator coord(store, s);
  Rendezvous a(store, s, node("n0")), b(store, s, node("n1"));
  auto fa = std::async(std::launch::async, [&] { return a.join(); });
  b.join();
  fa.get();
  EXPECT_FALSE(a.restart_requested(0));
  RestartRecord won = a.propose_restart(0, {"failure", "rank 1 exited with 1", "a"});
  RestartRecord lost = b.propose_restart(0, {"failure", "rank 3 exited with 1", "b"});
  EXPECT_EQ(won.reason, "rank 1 exited with 1");
  EXPECT_EQ(lost.reason, won.reason);
  ASSERT_TRUE(b.restart_requested(0));
  EXPECT_EQ(b.restart_requested(0)->by, "a");
  a.advance(0);
  b.advance(0);  // idempotent
  fa = std::async(std::launch::async, [&] { return a.join(); });
  Round r1 = b.join();
  fa.get();
  EXPECT_EQ(r1.number, 1);
  EXPECT_EQ(r1.failures, 1);
  // A scale-up restart is not counted.
  a.propose_restart(1, {"scale_up", "1 node(s) waiting", "c"});
  a.advance(1);
  fa = std::async(std::launch::async, [&] { return a.join(); });
  Round r2 = b.join();
  fa.get();
  EXPECT_EQ(r2.number, 2);
  EXPECT_EQ(r2.failures, 1);
}

TEST(Rendezvous, LateJoinerWaitsThenScaleUpTakesItIn) {
  auto store = comm::make_memory_store();
  auto s = settings(1, 3);
  s.last_call = milliseconds(100);
  RendezvousCoordinator coord(store, s);
  Rendezvous a(store, s, node("n0")), c(store, s, node("n2"));
  Round r0 = a.join();
  EXPECT_EQ(r0.nodes.size(), 1u);
  auto fc = std::async(std::launch::async, [&] { return c.join(); });
  // The coordinator sees a node waiting on a round below max and ends the round as a scale-up.
  auto deadline = std::chrono::steady_clock::now() + milliseconds(3000);
  std::optional<RestartRecord> rec;
  while (!(rec = a.restart_requested(0)) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(5));
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->kind, "scale_up");
  EXPECT_FALSE(rec->counts());
  a.advance(0);
  Round r1 = a.join();
  Round rc = fc.get();
  EXPECT_EQ(r1.number, 1);
  EXPECT_EQ(r1.nodes.size(), 2u);
  EXPECT_EQ(rc.nodes.size(), 2u);
  EXPECT_EQ(r1.failures, 0);
}

TEST(Rendezvous, SilentNodeEndsTheRunningRound) {
  auto store = comm::make_memory_store();
  auto s = settings(1, 2);
  RendezvousCoordinator coord(store, s);
  auto a = std::make_unique<Rendezvous>(store, s, node("n0"));
  auto b = std::make_unique<Rendezvous>(store, s, node("n1"));
  auto fa = std::async(std::launch::async, [&] { return a->join(); });
  b->join();
  fa.get();
  b.reset();  // its heartbeat stops, as when the agent is killed
  auto deadline = std::chrono::steady_clock::now() + milliseconds(3000);
  std::optional<RestartRecord> rec;
  while (!(rec = a->restart_requested(0)) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(5));
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->kind, "node_lost");
  EXPECT_NE(rec->reason.find("n1"), std::string::npos) << rec->reason;
  EXPECT_TRUE(rec->counts());
  a->advance(0);
  Round r1 = a->join();  // min 1: continues alone after the last call
  EXPECT_EQ(r1.nodes.size(), 1u);
  EXPECT_EQ(r1.failures, 1);
}

TEST(Rendezvous, StaticOrdersByNodeRank) {
  auto store = comm::make_memory_store();
  auto s = settings(3, 3);
  s.order_by_node_rank = true;
  RendezvousCoordinator coord(store, s);
  Rendezvous a(store, s, node("n0", 2)), b(store, s, node("n1", 0)), c(store, s, node("n2", 1));
  auto fa = std::async(std::launch::async, [&] { return a.join(); });
  auto fb = std::async(std::launch::async, [&] { return b.join(); });
  Round rc = c.join();
  EXPECT_EQ(fa.get().group_rank, 2);
  EXPECT_EQ(fb.get().group_rank, 0);
  EXPECT_EQ(rc.group_rank, 1);
  EXPECT_EQ(rc.first_rank(2), 4);
}

TEST(Rendezvous, FailureRecordsSortedByTime) {
  auto store = comm::make_memory_store();
  auto s = settings(1, 1);
  Rendezvous a(store, s, node("n0"));
  FailureRecord late, early;
  late.rank = 3;
  late.time = 20;
  early.rank = 1;
  early.time = 10;
  early.message = "Signal 9 (SIGKILL) received by PID 7";
  a.publish_failure(0, late);
  a.publish_failure(0, early);
  auto f = a.failures(0);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].rank, 1);
  EXPECT_EQ(f[0].message, early.message);
  // A peer's connection error noticed 5 ms before the killed worker's exit: the killed one is the root cause;
  // a signal 3 s later is another story.
  FailureRecord peer, killed, much_later;
  peer.rank = 0;
  peer.exitcode = 1;
  peer.time = 100.000;
  killed.rank = 2;
  killed.exitcode = -9;
  killed.time = 100.005;
  much_later.rank = 3;
  much_later.exitcode = -15;
  much_later.time = 103;
  a.publish_failure(1, peer);
  a.publish_failure(1, much_later);
  a.publish_failure(1, killed);
  f = a.failures(1);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].rank, 2);
  EXPECT_EQ(f[1].rank, 0);
  EXPECT_EQ(f[2].rank, 3);
  a.publish_failure(2, peer);
  a.publish_failure(2, much_later);
  EXPECT_EQ(a.failures(2)[0].rank, 0);
}

}  // namespace
}  // namespace ct::launch

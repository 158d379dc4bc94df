// Store: in-memory and TCP implementations behave alike (set/get/add/check/wait/remove), waits time out
// naming the missing keys, clients retry until the server appears, and concurrent clients see one consistent
// counter.
#include "comm/store.h"

#include <gtest/gtest.h>

#include <thread>

#include "comm_test_util.h"
#include "core/error.h"

namespace ct::comm {
namespace {

using namespace std::chrono_literals;

// `other` sets the late key from another thread (a TCP client serves one request at a time).
void exercise(Store& s, Store& other) {
  s.set_string("a", "hello");
  EXPECT_EQ(s.get_string("a", 1s), "hello");
  EXPECT_EQ(s.add("n", 5), 5);
  EXPECT_EQ(s.add("n", -2), 3);
  EXPECT_TRUE(s.check({"a", "n"}));
  EXPECT_FALSE(s.check({"a", "zzz"}));
  s.wait({"a", "n"}, 1s);
  EXPECT_TRUE(s.remove("a"));
  EXPECT_FALSE(s.remove("a"));
  Store::Bytes big(200000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7);
  s.set("big", big);
  EXPECT_EQ(s.get("big", 1s), big);
  try {
    s.get("never", 100ms);
    FAIL() << "get of an absent key returned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("never'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
  try {
    s.wait({"n", "missing1"}, 100ms);
    FAIL() << "wait for an absent key returned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing1"), std::string::npos) << e.what();
  }
  // Still usable after a timeout, and a late set wakes a waiter.
  test::TestThread setter("setter thread", [&] {
    std::this_thread::sleep_for(50ms);
    other.set_string("late", "x");
  });
  EXPECT_EQ(s.get_string("late", 5s), "x");
  setter.join();
}

TEST(Store, Memory) {
  auto s = make_memory_store();
  exercise(*s, *s);
}

TEST(Store, Prefix) {
  auto inner = make_memory_store();
  auto p = make_prefix_store(inner, "job1");
  exercise(*p, *p);
  EXPECT_TRUE(inner->check({"job1/n"}));
  EXPECT_FALSE(inner->check({"n"}));
}

TEST(Store, TcpServerAndClients) {
  TcpStoreServer server(0);
  auto s = connect_tcp_store("127.0.0.1", server.port(), 2s);
  auto other = connect_tcp_store("127.0.0.1", server.port(), 2s);
  exercise(*s, *other);
  // Many clients bump one counter at once, connecting by name.
  std::vector<test::TestThread> ts;
  for (int t = 0; t < 8; ++t)
    ts.emplace_back(str("client thread ", t), [&] {
      auto c = connect_tcp_store("localhost", server.port(), 2s);
      for (int i = 0; i < 50; ++i) c->add("ctr", 1);
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(s->add("ctr", 0), 400);
}

TEST(Store, TcpClientRetriesUntilServerAppears) {
  int port = test::free_port();
  std::unique_ptr<TcpStoreServer> server;
  test::TestThread later("server thread", [&] {
    std::this_thread::sleep_for(200ms);
    server = std::make_unique<TcpStoreServer>(port);
  });
  auto s = connect_tcp_store("127.0.0.1", port, 5s);
  later.join();
  s->set_string("k", "v");
  EXPECT_EQ(s->get_string("k", 1s), "v");
}

TEST(Store, TcpErrorsNameHostPortAndCause) {
  int port = test::free_port();
  try {
    connect_tcp_store("127.0.0.1", port, 200ms);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(str("127.0.0.1:", port)), std::string::npos) << e.what();
  }
  try {
    connect_tcp_store("no-such-host.invalid", port, 200ms);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-host.invalid"), std::string::npos) << e.what();
  }
  TcpStoreServer server(0);
  try {
    TcpStoreServer again(server.port());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already in use"), std::string::npos) << e.what();
  }
  EXPECT_THROW(connect_tcp_store("127.0.0.1", 70000, 100ms), Error);
}

TEST(Store, TcpServerGoneIsAnErrorNotAHang) {
  auto server = std::make_unique<TcpStoreServer>(0);
  auto s = connect_tcp_store("127.0.0.1", server->port(), 1s);
  test::TestThread killer("killer thread", [&] {
    std::this_thread::sleep_for(100ms);
    server.reset();
  });
  EXPECT_THROW(s->get("never", 10s), Error);
  killer.join();
}

}  // namespace
}  // namespace ct::comm

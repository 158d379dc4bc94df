// Store: in-memory and TCP implementations behave alike (set/get/add/check/wait/remove/compare_set/num_keys),
// waits time out naming the missing keys, clients retry until the server appears, and concurrent clients see
// one consistent counter. The TCP server is checked byte for byte with c10d's wire format of both generations
// (hand-encoded here, independent of tcp_store_wire.h), and the client's protocol probe against fake servers
// that behave like a 2.x legacy server, a 2.x libuv server and a 1.13 server.
#include "comm/store.h"

#include <gtest/gtest.h>
#include <netinet/tcp.h>
#include <poll.h>

#include <atomic>
#include <map>
#include <mutex>
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
  EXPECT_EQ(s.get_string("n", 1s), "3");  // counters are decimal ASCII, like c10d's
  EXPECT_TRUE(s.check({"a", "n"}));
  EXPECT_FALSE(s.check({"a", "zzz"}));
  s.wait({"a", "n"}, 1s);
  EXPECT_TRUE(s.remove("a"));
  EXPECT_FALSE(s.remove("a"));
  Store::Bytes big(200000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7);
  s.set("big", big);
  EXPECT_EQ(s.get("big", 1s), big);
  // compare_set, c10d's semantics.
  auto B = [](const std::string& x) { return Store::Bytes(x.begin(), x.end()); };
  EXPECT_EQ(s.compare_set("cs", B("x"), B("y")), B("x"));  // missing, expected non-empty: not created
  EXPECT_FALSE(s.check({"cs"}));
  EXPECT_EQ(s.compare_set("cs", {}, B("v1")), B("v1"));  // missing, expected empty: created
  EXPECT_EQ(s.compare_set("cs", B("v1"), B("v2")), B("v2"));
  EXPECT_EQ(s.compare_set("cs", B("nope"), B("v3")), B("v2"));
  EXPECT_EQ(s.get_string("cs", 1s), "v2");
  int64_t before = s.num_keys();
  s.set_string("one_more", "1");
  EXPECT_EQ(s.num_keys(), before + 1);
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
  EXPECT_EQ(p->num_keys(), inner->num_keys());  // c10d's PrefixStore counts the whole store
}

TEST(Store, TcpServerAndClients) {
  TcpStoreServer server(0);
  auto s = connect_tcp_store("127.0.0.1", server.port(), 2s);
  auto other = connect_tcp_store("127.0.0.1", server.port(), 2s);
  EXPECT_NE(s->describe().find("c10d 2.x"), std::string::npos)
      << s->describe();  // ours answers the probe as 2.x
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
  auto s = connect_tcp_store("127.0.0.1", server.port(), 1s);
  try {
    s->wait({"w1", "w2"}, 50ms);
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(str("127.0.0.1:", server.port())), std::string::npos) << m;
    EXPECT_NE(m.find("'w1', 'w2'"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
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

// ---------------------------------------------------------------- byte level

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}
std::string le32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}
std::string S(const std::string& x) {  // c10d string: uint64 length + bytes
  return le64(x.size()) + x;
}
std::string C(int cmd) {
  return std::string(1, static_cast<char>(cmd));
}
const std::string kValidate = C(0) + le32(0x3C85F7CE);

// A raw client socket; every read is bounded.
class Raw {
 public:
  explicit Raw(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) ADD_FAILURE() << "connect failed";
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~Raw() { ::close(fd_); }
  void send(const std::string& b) {
    ASSERT_EQ(::send(fd_, b.data(), b.size(), MSG_NOSIGNAL), ssize_t(b.size()));
  }
  // One byte per send(), the way 1.13 sends its command byte, only more so.
  void send_bytewise(const std::string& b) {
    for (char c : b) {
      send(std::string(1, c));
      std::this_thread::sleep_for(200us);
    }
  }
  // Up to n bytes within ms (fewer when the peer closes or the time is up).
  std::string read(size_t n, int ms = 3000) {
    std::string out;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (out.size() < n) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
              .count();
      pollfd p{fd_, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) break;
      char buf[4096];
      ssize_t r = ::recv(fd_, buf, std::min(sizeof(buf), n - out.size()), 0);
      if (r <= 0) break;
      out.append(buf, static_cast<size_t>(r));
    }
    return out;
  }
  bool quiet(int ms) { return read(1, ms).empty() && !closed(0); }
  // The peer closed (EOF or reset) within ms.
  bool closed(int ms = 3000) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return false;
    char c;
    return ::recv(fd_, &c, 1, MSG_PEEK) <= 0;
  }
  int64_t i64() {
    std::string r = read(8);
    EXPECT_EQ(r.size(), 8u);
    int64_t v = 0;
    std::memcpy(&v, r.data(), std::min<size_t>(8, r.size()));
    return v;
  }
  std::string vec() {  // a c10d byte vector
    uint64_t n = static_cast<uint64_t>(i64());
    return n > (1u << 20) ? "<bad length>" : read(n);
  }

 private:
  int fd_ = -1;
};

TEST(StoreWire, V113ByteSequences) {
  TcpStoreServer server(0);
  Raw idle(server.port());  // 1.13 clients also open a "callback" connection that never speaks
  Raw c(server.port());
  // What torch 1.13's client sends first: ADD "init/" 1, command byte in its own send().
  c.send(C(3));
  c.send(S("init/") + le64(1));
  EXPECT_EQ(c.i64(), 1);
  c.send_bytewise(C(0) + S("/k") + S("v"));       // SET, split into single bytes
  c.send(C(5) + le64(2) + S("/k") + S("init/"));  // WAIT: both exist
  EXPECT_EQ(c.read(1), C(0));
  c.send(C(2) + S("/k"));  // GET
  EXPECT_EQ(c.vec(), "v");
  c.send(C(3) + S("/n") + le64(uint64_t(-7)));  // ADD -7, then +10
  EXPECT_EQ(c.i64(), -7);
  c.send(C(3) + S("/n") + le64(10));
  EXPECT_EQ(c.i64(), 3);
  c.send(C(2) + S("/n"));
  EXPECT_EQ(c.vec(), "3");  // decimal ASCII
  // COMPARE_SET: missing + empty expected creates; missing + non-empty expected answers expected, creates
  // nothing; match swaps; mismatch answers the current value.
  c.send(C(1) + S("/cs") + S("") + S("a"));
  EXPECT_EQ(c.vec(), "a");
  c.send(C(1) + S("/cs2") + S("zz") + S("b"));
  EXPECT_EQ(c.vec(), "zz");
  c.send(C(1) + S("/cs") + S("a") + S("b"));
  EXPECT_EQ(c.vec(), "b");
  c.send(C(1) + S("/cs") + S("q") + S("r"));
  EXPECT_EQ(c.vec(), "b");
  c.send(C(4) + le64(1) + S("/cs2"));  // CHECK
  EXPECT_EQ(c.read(1), C(1));          // NOT_READY
  c.send(C(4) + le64(0));              // CHECK of no keys: READY
  EXPECT_EQ(c.read(1), C(0));
  c.send(C(6));  // GETNUMKEYS: init/, /k, /n, /cs
  EXPECT_EQ(c.i64(), 4);
  // WATCH_KEY: registered, then told about the change.
  Raw w(server.port());
  w.send(C(7) + S("/k"));
  EXPECT_EQ(w.read(1), C(3));
  c.send(C(0) + S("/k") + S("v2"));
  EXPECT_EQ(w.read(1), C(0));  // KEY_UPDATED, key, old, new
  EXPECT_EQ(w.vec(), "/k");
  EXPECT_EQ(w.vec(), "v");
  EXPECT_EQ(w.vec(), "v2");
  c.send(C(8) + S("/k"));  // DELETE_KEY
  EXPECT_EQ(c.i64(), 1);
  EXPECT_EQ(w.read(1), C(2));  // KEY_DELETED
  c.send(C(8) + S("/k"));
  EXPECT_EQ(c.i64(), 0);
  // GET of a missing key: c10d's server drops the connection; so do we, and carry on.
  c.send(C(2) + S("/k"));
  EXPECT_TRUE(c.closed());
  Raw d(server.port());
  d.send(C(6));
  EXPECT_EQ(d.i64(), 3);
  EXPECT_TRUE(idle.quiet(50));
}

TEST(StoreWire, V2ByteSequences) {
  TcpStoreServer server(0);
  Raw c(server.port());
  c.send(kValidate);
  EXPECT_TRUE(c.quiet(50));          // VALIDATE has no reply
  c.send(C(13) + le32(0xDEADBEEF));  // PING echoes the nonce
  EXPECT_EQ(c.read(4), le32(0xDEADBEEF));
  c.send(C(1) + S("/k") + S("v"));   // SET
  c.send(C(6) + le64(1) + S("/k"));  // WAIT
  EXPECT_EQ(c.read(1), C(0));
  c.send(C(3) + S("/k"));  // GET
  EXPECT_EQ(c.vec(), "v");
  c.send(C(4) + S("/n") + le64(5));  // ADD
  EXPECT_EQ(c.i64(), 5);
  c.send(C(3) + S("/n"));
  EXPECT_EQ(c.vec(), "5");
  c.send(C(2) + S("/cs") + S("") + S("x"));  // COMPARE_SET creates
  EXPECT_EQ(c.vec(), "x");
  c.send(C(2) + S("/cs") + S("x") + S("y"));
  EXPECT_EQ(c.vec(), "y");
  c.send(C(2) + S("/none") + S("e") + S("d"));
  EXPECT_EQ(c.vec(), "e");
  c.send(C(5) + le64(2) + S("/k") + S("/none"));  // CHECK
  EXPECT_EQ(c.read(1), C(1));
  c.send(C(9) + S("/ap") + S("ab"));  // APPEND creates, then appends
  c.send(C(9) + S("/ap") + S("cd"));
  c.send(C(11) + le64(2) + S("/m1") + S("one") + S("/m2") + S("two"));  // MULTI_SET
  c.send(C(10) + le64(3) + S("/m1") + S("/ap") + S("/m2"));             // MULTI_GET
  EXPECT_EQ(c.vec(), "one");
  EXPECT_EQ(c.vec(), "abcd");
  EXPECT_EQ(c.vec(), "two");
  c.send(C(7));  // GETNUMKEYS: /k /n /cs /ap /m1 /m2
  EXPECT_EQ(c.i64(), 6);
  c.send(C(8) + S("/m1"));  // DELETE_KEY
  EXPECT_EQ(c.i64(), 1);
  // WAIT blocks until every key exists, however many sets that takes; sets from another connection wake it.
  Raw other(server.port());
  other.send(kValidate);
  c.send(C(6) + le64(2) + S("/w1") + S("/w2"));
  EXPECT_TRUE(c.quiet(100));
  other.send(C(1) + S("/w1") + S("1"));
  EXPECT_TRUE(c.quiet(100));
  other.send(C(4) + S("/w2") + le64(1));  // an ADD creates a key too
  EXPECT_EQ(other.i64(), 1);
  EXPECT_EQ(c.read(1), C(0));
  // CANCEL_WAIT: the pending WAIT is answered WAIT_CANCELED and forgotten (a later set sends nothing more).
  c.send(C(6) + le64(1) + S("/never"));
  EXPECT_TRUE(c.quiet(50));
  c.send(C(12));
  EXPECT_EQ(c.read(1), C(1));
  other.send(C(1) + S("/never") + S("now"));
  EXPECT_TRUE(c.quiet(100));
  c.send(C(13) + le32(7));  // still in sync
  EXPECT_EQ(c.read(4), le32(7));
  // MULTI_GET of a missing key drops the connection, as c10d's server does.
  c.send(C(10) + le64(1) + S("/m1"));
  EXPECT_TRUE(c.closed());
}

TEST(StoreWire, BothGenerationsShareOneStoreAndSplitRequests) {
  TcpStoreServer server(0);
  Raw v113(server.port()), v2(server.port());
  v2.send_bytewise(kValidate + C(1) + S("/shared") + S("from2"));
  v113.send_bytewise(C(2) + S("/shared"));  // 1.13 GET
  EXPECT_EQ(v113.vec(), "from2");
  v113.send(C(3) + S("/ctr") + le64(2));
  EXPECT_EQ(v113.i64(), 2);
  v2.send(C(4) + S("/ctr") + le64(3));
  EXPECT_EQ(v2.i64(), 5);
  // A 1.13 SET whose first bytes could start a VALIDATE: 0, then a key length that is not the magic.
  v113.send(C(0) + S("/z") + S("zz"));
  v2.send(C(3) + S("/z"));
  EXPECT_EQ(v2.vec(), "zz");
}

TEST(StoreWire, BadClientsAreDroppedAndTheServerCarriesOn) {
  TcpStoreServer server(0);
  {
    Raw bad(server.port());  // unknown 2.x command
    bad.send(kValidate + C(42));
    EXPECT_TRUE(bad.closed());
  }
  {
    Raw bad(server.port());  // a second VALIDATE
    bad.send(kValidate + kValidate);
    EXPECT_TRUE(bad.closed());
  }
  {
    Raw bad(server.port());  // absurd key length: dropped, nothing allocated
    bad.send(C(0) + le64(uint64_t(1) << 62) + "x");
    EXPECT_TRUE(bad.closed());
  }
  {
    Raw bad(server.port());  // ADD on a non-number
    bad.send(C(0) + S("/t") + S("text") + C(3) + S("/t") + le64(1));
    EXPECT_TRUE(bad.closed());
  }
  // Clients that vanish mid-request, or while waiting, leave nothing behind; many at once are fine.
  std::vector<std::unique_ptr<Raw>> many;
  for (int i = 0; i < 64; ++i) {
    many.push_back(std::make_unique<Raw>(server.port()));
    if (i % 3 == 0) many.back()->send(C(0) + le64(100) + "partial");
    if (i % 3 == 1) many.back()->send(kValidate + C(6) + le64(1) + S("/never"));
  }
  many.clear();
  Raw ok(server.port());
  ok.send(kValidate + C(1) + S("/after") + S("1") + C(7));
  EXPECT_EQ(ok.i64(), 2);  // /t and /after
}

// ---------------------------------------------------------------- the client's probe against fake servers

// Behaves like one c10d server generation, just enough for the probe and a set/get/add: kind "legacy2"
// (2.2-2.4 legacy backend: closes a connection whose first request is not VALIDATE, no PING), "libuv2" (2.5
// libuv: ignores such a connection without answering or closing; PING) or "v113" (reads 0 as SET with a
// uint64 key length, closes when the length is absurd). Records every connection's first byte.
class FakeServer {
 public:
  explicit FakeServer(std::string kind) : kind_(std::move(kind)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    ::listen(fd_, 16);
    socklen_t len = sizeof(a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  std::vector<int> first_bytes() {
    std::lock_guard<std::mutex> l(mu_);
    return first_;
  }

 private:
  // Reads exactly n bytes, false on EOF/stop.
  bool get(int c, void* out, size_t n) {
    char* p = static_cast<char*>(out);
    while (n > 0) {
      pollfd pf{c, POLLIN, 0};
      if (stop_) return false;
      if (::poll(&pf, 1, 20) <= 0) continue;
      ssize_t r = ::recv(c, p, n, 0);
      if (r <= 0) return false;
      p += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  }
  bool get_str(int c, std::string& s) {
    uint64_t n;
    if (!get(c, &n, 8) || n > 4096) return false;
    s.resize(n);
    return get(c, s.data(), n);
  }
  void put(int c, const std::string& b) {
    ssize_t w = ::send(c, b.data(), b.size(), MSG_NOSIGNAL);
    (void)w;
  }

  void serve(int c) {
    uint8_t cmd;
    if (!get(c, &cmd, 1)) return;
    {
      std::lock_guard<std::mutex> l(mu_);
      first_.push_back(cmd);
    }
    if (kind_ == "v113") {
      uint64_t n;
      if (cmd != 0 || !get(c, &n, 8) || n > (uint64_t(1) << 62)) return;  // 1.13: vector of n throws -> close
      return;
    }
    if (cmd != 0) {
      if (kind_ == "legacy2") return;  // closes
      while (get(c, &cmd, 1)) {        // libuv: ignores, never answers
      }
      return;
    }
    uint32_t magic;
    if (!get(c, &magic, 4) || magic != 0x3C85F7CE) return;
    while (get(c, &cmd, 1)) {
      std::string k, v;
      uint64_t n;
      switch (cmd) {
        case 1:  // SET
          if (!get_str(c, k) || !get_str(c, v)) return;
          map_[k] = v;
          break;
        case 3:  // GET
          if (!get_str(c, k) || !map_.count(k)) return;
          put(c, S(map_[k]));
          break;
        case 4: {  // ADD
          int64_t d;
          if (!get_str(c, k) || !get(c, &d, 8)) return;
          d += map_.count(k) ? std::stoll(map_[k]) : 0;
          map_[k] = std::to_string(d);
          put(c, le64(static_cast<uint64_t>(d)));
          break;
        }
        case 6:  // WAIT (answers only keys already there)
          if (!get(c, &n, 8)) return;
          for (uint64_t i = 0; i < n; ++i)
            if (!get_str(c, k)) return;
          put(c, C(0));
          break;
        case 7:
          put(c, le64(map_.size()));
          break;
        case 13: {
          uint32_t nonce;
          if (kind_ == "legacy2" || !get(c, &nonce, 4)) return;  // 2.2-2.4: PING unknown -> close
          put(c, le32(nonce));
          break;
        }
        default:
          return;
      }
    }
  }

  void run() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      serve(c);  // one connection at a time is enough for one client
      ::close(c);
    }
  }

  std::string kind_;
  int port_ = 0;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<int> first_;
  std::map<std::string, std::string> map_;
};

TEST(StoreProbe, Legacy2xServerClosingNonValidateConnections) {
  FakeServer fake("legacy2");
  auto s = connect_tcp_store("127.0.0.1", fake.port(), 2s);
  EXPECT_NE(s->describe().find("c10d 2.x"), std::string::npos) << s->describe();
  s->set_string("k", "v");
  EXPECT_EQ(s->get_string("k", 1s), "v");
  EXPECT_EQ(s->add("n", 2), 2);
  for (int b : fake.first_bytes()) EXPECT_EQ(b, 0) << "a connection did not open with VALIDATE";
}

TEST(StoreProbe, LibUv2xServerIgnoringNonValidateConnections) {
  FakeServer fake("libuv2");
  auto t0 = std::chrono::steady_clock::now();
  auto s = connect_tcp_store("127.0.0.1", fake.port(), 5s);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s) << "the probe waited for an answer that never comes";
  EXPECT_NE(s->describe().find("c10d 2.x"), std::string::npos) << s->describe();
  s->set_string("k", "v");
  EXPECT_EQ(s->get_string("k", 1s), "v");
  for (int b : fake.first_bytes()) EXPECT_EQ(b, 0);
}

TEST(StoreProbe, V113ServerClosesTheProbe) {
  FakeServer fake("v113");
  auto s = connect_tcp_store("127.0.0.1", fake.port(), 2s);
  EXPECT_NE(s->describe().find("c10d 1.13"), std::string::npos) << s->describe();
}

TEST(StoreProbe, SilentServerIsABoundedError) {
  // Accepts (the kernel's backlog does) but never answers: the probe gives up at the connect timeout.
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ::listen(fd, 4);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  auto t0 = std::chrono::steady_clock::now();
  try {
    connect_tcp_store("127.0.0.1", ntohs(a.sin_port), 300ms);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("probe"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  ::close(fd);
}

TEST(StoreProbe, ClientKeysCarryC10dsLeadingSlash) {
  TcpStoreServer server(0);
  auto s = connect_tcp_store("127.0.0.1", server.port(), 2s);
  s->set_string("k", "ours");
  Raw c(server.port());
  c.send(kValidate + C(3) + S("/k"));
  EXPECT_EQ(c.vec(), "ours");
  c.send(C(1) + S("/py") + S("theirs"));
  EXPECT_EQ(s->get_string("py", 1s), "theirs");
}

}  // namespace
}  // namespace ct::comm

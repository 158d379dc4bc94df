// connect_tcp_store: a c10d TCPStore client for our server, torch 1.13's and torch 2.x's.
//
// Which protocol? The two generations number their commands differently and neither server tolerates the
// other's opening: a 2.x server (legacy backend) closes a connection whose first request is not VALIDATE, its
// libuv backend (the default from 2.4) silently ignores such a connection, neither answering nor closing, and
// a 1.13 server reads VALIDATE (command 0) as SET followed by a uint64 key length. So the probe, on a
// connection of its own, is one send of
//     0x00 | magic CE F7 85 3C | 0x07 | 0x0D | nonce (4 bytes, the second one >= 0x80)
// which a 2.x server reads as VALIDATE, GETNUMKEYS, PING(nonce), and a 1.13 server as SET whose key length is
// the uint64 CE F7 85 3C 07 0D n0 n1 >= 2^63: its std::vector for the key throws before allocating anything,
// the handler's exception closes the connection (seen here: connection reset, server carries on). So:
//   8 bytes (the key count), then the nonce echoed  -> 2.5+ server, or ours: keep this connection;
//   8 bytes, then the connection closes            -> 2.2-2.4 (no PING): reconnect, VALIDATE first;
//   closed with nothing                             -> 1.13: reconnect and speak 1.13.
// Both servers answer or close at once, so the probe is bounded by the server's round trip, never by a guess.
// (1.13's own answer to a 1.13 CHECK of zero keys is READY, and a legacy 2.x server closes on it, but the
// libuv 2.x server would leave that probe unanswered: it is not used.) Servers of 2.0/2.1 (no VALIDATE) look
// like 1.13 here and are not supported.
//
// Timeouts: a request's reply is awaited with poll() up to its deadline; on timeout, a lost connection or a
// malformed reply the connection is dropped, so a late reply is never read as the next one, and the next
// request reconnects (with VALIDATE on 2.x).
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "comm/store.h"
#include "comm/tcp_store_wire.h"
#include "core/error.h"

namespace ct::comm {

using namespace wire;
using Clock = std::chrono::steady_clock;

namespace {

std::string quoted(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", '" : "'") + keys[i] + "'";
  return s;
}

int64_t ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

class TcpStore final : public Store {
 public:
  TcpStore(std::string host, int port, Timeout connect_timeout)
      : host_(std::move(host)), port_(port), timeout_(connect_timeout) {
    CT_CHECK(port_ > 0 && port_ < 65536, "tcp store: port ", port_, " out of range 1..65535 (MASTER_PORT)");
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    std::string service = std::to_string(port_);
    int rc = ::getaddrinfo(host_.c_str(), service.c_str(), &hints, &res);
    if (rc != 0 || !res)
      fail("tcp store: cannot resolve MASTER_ADDR '", host_, "': ", rc ? ::gai_strerror(rc) : "no address");
    for (addrinfo* a = res; a; a = a->ai_next) {
      sockaddr_storage s{};
      std::memcpy(&s, a->ai_addr, a->ai_addrlen);
      addrs_.push_back({s, a->ai_addrlen});
    }
    ::freeaddrinfo(res);
    // IPv4 first: our server and torch's listen dual-stack, but a server bound to 0.0.0.0 has no ::1.
    std::stable_sort(addrs_.begin(), addrs_.end(), [](const Addr& a, const Addr& b) {
      return a.ss.ss_family == AF_INET && b.ss.ss_family != AF_INET;
    });
    std::lock_guard<std::mutex> lock(mu_);
    probe(Clock::now() + timeout_);
  }
  ~TcpStore() override { close_fd(); }

  void set(const std::string& key, const Bytes& value) override {
    std::string m = begin(Op::set);
    put_str(m, "/" + key);
    put_bytes(m, value.data(), value.size());
    std::lock_guard<std::mutex> lock(mu_);
    send_request(m, {key}, "set");
  }

  Bytes get(const std::string& key, Timeout timeout) override {
    std::lock_guard<std::mutex> lock(mu_);
    wait_locked({key}, timeout);
    std::string m = begin(Op::get);
    put_str(m, "/" + key);
    send_request(m, {key}, "get");
    return read_bytes(Clock::now() + timeout_, {key}, "get");
  }

  int64_t add(const std::string& key, int64_t delta) override {
    std::string m = begin(Op::add);
    put_str(m, "/" + key);
    put_le<int64_t>(m, delta);
    std::lock_guard<std::mutex> lock(mu_);
    send_request(m, {key}, "add");
    return read_value<int64_t>(Clock::now() + timeout_, {key}, "add");
  }

  bool check(const std::vector<std::string>& keys) override {
    std::string m = begin(Op::check);
    put_keys(m, keys);
    std::lock_guard<std::mutex> lock(mu_);
    send_request(m, keys, "check");
    uint8_t r = read_value<uint8_t>(Clock::now() + timeout_, keys, "check");
    if (r != kReady && r != kNotReady) malformed(keys, "check", str("reply byte ", int(r)));
    return r == kReady;
  }

  void wait(const std::vector<std::string>& keys, Timeout timeout) override {
    if (keys.empty()) return;
    std::lock_guard<std::mutex> lock(mu_);
    wait_locked(keys, timeout);
  }

  bool remove(const std::string& key) override {
    std::string m = begin(Op::remove);
    put_str(m, "/" + key);
    std::lock_guard<std::mutex> lock(mu_);
    send_request(m, {key}, "remove");
    return read_value<int64_t>(Clock::now() + timeout_, {key}, "remove") == 1;
  }

  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override {
    std::string m = begin(Op::compare_set);
    put_str(m, "/" + key);
    put_bytes(m, expected.data(), expected.size());
    put_bytes(m, desired.data(), desired.size());
    std::lock_guard<std::mutex> lock(mu_);
    send_request(m, {key}, "compare_set");
    return read_bytes(Clock::now() + timeout_, {key}, "compare_set");
  }

  int64_t num_keys() override {
    std::string m = begin(Op::num_keys);
    std::lock_guard<std::mutex> lock(mu_);
    send_request(m, {}, "num_keys");
    return read_value<int64_t>(Clock::now() + timeout_, {}, "num_keys");
  }

  std::string describe() const override {
    return str("tcp store ", host_, ":", port_, " (", gen_name(gen_), ")");
  }

 private:
  struct Addr {
    sockaddr_storage ss;
    socklen_t len;
  };

  std::string begin(Op op) const {
    std::string m;
    put_u8(m, code_of(gen_, op));
    return m;
  }
  static void put_keys(std::string& m, const std::vector<std::string>& keys) {
    put_le<uint64_t>(m, keys.size());
    for (auto& k : keys) put_str(m, "/" + k);
  }

  void close_fd() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // One TCP connection, retried (every address, growing naps) until the deadline.
  int open_socket(Clock::time_point deadline) {
    auto start = Clock::now();
    auto nap = std::chrono::milliseconds(10);
    std::string last = "no attempt";
    for (;;) {
      for (const Addr& a : addrs_) {
        int fd = ::socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CT_CHECK(fd >= 0, "tcp store: socket(): ", std::strerror(errno));
        if (::connect(fd, reinterpret_cast<const sockaddr*>(&a.ss), a.len) == 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          return fd;
        }
        last = std::strerror(errno);
        ::close(fd);
      }
      if (Clock::now() + nap > deadline)
        fail("tcp store: could not connect to ", host_, ":", port_, " (MASTER_ADDR:MASTER_PORT) after ",
             ms_since(start), " ms: ", last);
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::milliseconds(500));
    }
  }

  // Reads up to `want` bytes into out until the deadline or EOF/error. Returns false on timeout.
  static bool read_some(int fd, std::string& out, size_t want, Clock::time_point deadline, bool& closed) {
    char buf[4096];
    closed = false;
    while (out.size() < want) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{fd, POLLIN, 0};
      int rc = ::poll(&p, 1, static_cast<int>(std::clamp<int64_t>(left, 0, 1 << 30)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) return false;
      ssize_t n = ::recv(fd, buf, std::min(sizeof(buf), want - out.size()), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        closed = true;
        return true;
      }
      out.append(buf, static_cast<size_t>(n));
    }
    return true;
  }

  void probe(Clock::time_point deadline) {
    auto start = Clock::now();
    int fd = open_socket(deadline);
    // Any nonce whose second byte is >= 0x80 (see the top of this file); the pid tells probes apart in
    // traces.
    const uint32_t pid = static_cast<uint32_t>(::getpid());
    const uint32_t nonce = 0x5AC08000u | ((pid >> 8) & 0x7Fu) << 8 | (pid & 0xFFu);
    std::string m;
    put_u8(m, code_of(Gen::v2, Op::validate));
    put_le<uint32_t>(m, kValidateMagic);
    put_u8(m, code_of(Gen::v2, Op::num_keys));
    put_u8(m, code_of(Gen::v2, Op::ping));
    put_le<uint32_t>(m, nonce);
    std::string in;
    bool closed = false;
    bool sent = send_all(fd, m);
    // A server that closes at once may make the send fail (EPIPE/ECONNRESET): that is an answer too.
    bool in_time = !sent || read_some(fd, in, 12, deadline, closed);
    if (!sent) closed = true;
    if (!in_time) {
      ::close(fd);
      fail("tcp store: ", host_, ":", port_, " did not answer the c10d protocol probe within ",
           ms_since(start), " ms (is it a c10d TCPStore?)");
    }
    if (in.empty() && closed) {  // 1.13
      ::close(fd);
      gen_ = Gen::v113;
      return;
    }
    if (in.size() < 8) {
      ::close(fd);
      fail("tcp store: ", host_, ":", port_, " answered the c10d protocol probe with ", in.size(),
           " byte(s) and closed (not a c10d TCPStore?)");
    }
    gen_ = Gen::v2;
    uint32_t echo = 0;
    if (in.size() == 12) std::memcpy(&echo, in.data() + 8, 4);
    if (in.size() == 12 && echo == nonce) {
      fd_ = fd;  // validated and in sync: keep it
      return;
    }
    ::close(fd);  // 2.2-2.4: no PING, the server closed it
  }

  static bool send_all(int fd, const std::string& m) {
    const char* p = m.data();
    size_t n = m.size();
    while (n > 0) {
      ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }

  void ensure_connected() {
    if (fd_ >= 0) return;
    fd_ = open_socket(Clock::now() + timeout_);
    if (gen_ == Gen::v2) {
      std::string v;
      put_u8(v, code_of(Gen::v2, Op::validate));
      put_le<uint32_t>(v, kValidateMagic);
      if (!send_all(fd_, v)) lost({}, "validate");
    }
  }

  void send_request(const std::string& m, const std::vector<std::string>& keys, const char* what) {
    ensure_connected();
    if (!send_all(fd_, m)) lost(keys, what);
  }

  void read_exact(std::string& out, size_t n, Clock::time_point deadline, Clock::time_point start,
                  const std::vector<std::string>& keys, const char* what) {
    out.clear();
    bool closed = false;
    if (!read_some(fd_, out, n, deadline, closed)) {
      close_fd();  // a late reply must not be read as the next one
      fail(describe(), ": timed out after ", ms_since(start), " ms waiting for ",
           keys.empty() ? std::string("the reply to ") + what : "key(s) " + quoted(keys));
    }
    if (closed) lost(keys, what);
  }

  template <class T>
  T read_value(Clock::time_point deadline, const std::vector<std::string>& keys, const char* what) {
    std::string in;
    read_exact(in, sizeof(T), deadline, Clock::now(), keys, what);
    T v;
    std::memcpy(&v, in.data(), sizeof(T));
    return v;
  }

  Bytes read_bytes(Clock::time_point deadline, const std::vector<std::string>& keys, const char* what) {
    uint64_t n = read_value<uint64_t>(deadline, keys, what);
    if (n > kMaxValue) malformed(keys, what, str("value length ", n));
    std::string in;
    read_exact(in, n, deadline, Clock::now(), keys, what);
    return Bytes(in.begin(), in.end());
  }

  void wait_locked(const std::vector<std::string>& keys, Timeout timeout) {
    std::string m = begin(Op::wait);
    put_keys(m, keys);
    auto start = Clock::now();
    send_request(m, keys, "wait");
    std::string in;
    read_exact(in, 1, start + timeout, start, keys, "wait");
    if (static_cast<uint8_t>(in[0]) != kStopWaiting) malformed(keys, "wait", str("reply byte ", int(in[0])));
  }

  [[noreturn]] void lost(const std::vector<std::string>& keys, const char* what) {
    close_fd();
    fail(describe(), ": connection lost during ", what, keys.empty() ? "" : " of key(s) " + quoted(keys),
         " (did the store's host, rank 0 or the launcher, exit?",
         std::string(what) == "get" ? " c10d servers also drop a get of a key deleted meanwhile)" : ")");
  }
  [[noreturn]] void malformed(const std::vector<std::string>& keys, const char* what,
                              const std::string& seen) {
    close_fd();
    fail(describe(), ": malformed reply to ", what, keys.empty() ? "" : " of key(s) " + quoted(keys), ": ",
         seen);
  }

  std::string host_;
  int port_;
  Timeout timeout_;
  std::vector<Addr> addrs_;
  Gen gen_ = Gen::unknown;
  std::mutex mu_;
  int fd_ = -1;
};

}  // namespace

std::shared_ptr<Store> connect_tcp_store(const std::string& host, int port, Store::Timeout connect_timeout) {
  return std::make_shared<TcpStore>(host, port, connect_timeout);
}

}  // namespace ct::comm

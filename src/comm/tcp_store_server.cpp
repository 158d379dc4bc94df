// TcpStoreServer: one thread, poll() over non-blocking sockets, a byte-stream parser per connection. Each
// connection's generation is decided by its first request: 0 followed by the VALIDATE magic is a 2.x client;
// anything else is 1.13 (a 1.13 SET also starts with 0, but its next 4 bytes are a key length, never the
// magic for a key under our limit). A connection that never sends (1.13's idle callback connection) just
// stays open. Replies go to a per-connection output buffer flushed as the socket allows, so a client that
// stops reading cannot block the server; one that lets it grow past kMaxRequest, or sends a malformed or
// oversized request, or one c10d would fail on (GET of a missing key, ADD on a non-number), is dropped, as
// c10d's server does.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <unordered_map>

#include "comm/store.h"
#include "comm/tcp_store_wire.h"
#include "core/error.h"

namespace ct::comm {

using namespace wire;
using Bytes = Store::Bytes;

namespace {

// Parses from buf[p...]; every read returns false when the data is not all there yet. `bad` is set (and false
// returned) when a length is over our limits.
struct Reader {
  const std::string& b;
  size_t p;
  bool bad = false;
  bool need(uint64_t n) const { return b.size() - p >= n; }
  template <class T>
  bool value(T& v) {
    if (!need(sizeof(T))) return false;
    std::memcpy(&v, b.data() + p, sizeof(T));
    p += sizeof(T);
    return true;
  }
  bool len(uint64_t& n, uint64_t max) {
    if (!value(n)) return false;
    if (n > max) bad = true;
    return !bad && need(n);
  }
  bool str(std::string& out, uint64_t max = kMaxKey) {
    uint64_t n;
    if (!len(n, max)) return false;
    out.assign(b.data() + p, n);
    p += n;
    return true;
  }
  bool bytes(Bytes& out) {
    uint64_t n;
    if (!len(n, kMaxValue)) return false;
    out.assign(b.begin() + static_cast<long>(p), b.begin() + static_cast<long>(p + n));
    p += n;
    return true;
  }
  bool keys(std::vector<std::string>& out) {
    uint64_t n;
    if (!value(n)) return false;
    if (n > kMaxKeys) return bad = true, false;
    out.resize(n);
    for (auto& k : out)
      if (!str(k)) return false;
    return true;
  }
};

// One parsed request.
struct Request {
  Op op = Op::invalid;
  std::vector<std::string> keys;
  std::vector<Bytes> values;  // set/append: 1; compare_set: expected, desired; multi_set: one per key
  int64_t delta = 0;          // add
  uint32_t word = 0;          // validate magic, ping nonce
};

enum class Parse { complete, incomplete, bad };

Parse parse(Gen gen, const std::string& buf, size_t start, Request& rq, size_t& end) {
  Reader r{buf, start};
  uint8_t code;
  if (!r.value(code)) return Parse::incomplete;
  rq = Request{};
  rq.op = op_of(gen, code);
  bool ok = false;
  switch (rq.op) {
    case Op::validate:
    case Op::ping:
      ok = r.value(rq.word);
      break;
    case Op::set:
    case Op::append:
      rq.keys.resize(1);
      rq.values.resize(1);
      ok = r.str(rq.keys[0]) && r.bytes(rq.values[0]);
      break;
    case Op::compare_set:
      rq.keys.resize(1);
      rq.values.resize(2);
      ok = r.str(rq.keys[0]) && r.bytes(rq.values[0]) && r.bytes(rq.values[1]);
      break;
    case Op::get:
    case Op::remove:
    case Op::watch_key:
      rq.keys.resize(1);
      ok = r.str(rq.keys[0]);
      break;
    case Op::add:
      rq.keys.resize(1);
      ok = r.str(rq.keys[0]) && r.value(rq.delta);
      break;
    case Op::check:
    case Op::wait:
    case Op::multi_get:
      ok = r.keys(rq.keys);
      break;
    case Op::multi_set: {
      uint64_t n;
      if (!r.value(n)) break;
      if (n > kMaxKeys) return Parse::bad;
      rq.keys.resize(n);
      rq.values.resize(n);
      ok = true;
      for (uint64_t i = 0; ok && i < n; ++i) ok = r.str(rq.keys[i]) && r.bytes(rq.values[i]);
      break;
    }
    case Op::num_keys:
    case Op::cancel_wait:
      ok = true;
      break;
    case Op::invalid:
      return Parse::bad;
  }
  if (r.bad) return Parse::bad;
  if (!ok) return Parse::incomplete;
  end = r.p;
  return Parse::complete;
}

bool parse_counter(const Bytes& v, int64_t& out) {
  const char* b = reinterpret_cast<const char*>(v.data());
  auto [ptr, ec] = std::from_chars(b, b + v.size(), out);
  return ec == std::errc() && ptr == b + v.size();
}

}  // namespace

struct TcpStoreServer::Impl {
  struct Conn {
    int fd = -1;
    Gen gen = Gen::unknown;
    std::string in;
    std::string out;
    std::set<std::string> awaited;  // WAIT in progress: keys not yet set since it began
    bool waiting = false;
    bool dead = false;
  };

  int listen_fd = -1;
  int wake[2] = {-1, -1};
  int port = 0;
  std::thread thread;
  std::unordered_map<std::string, Bytes> map;
  std::map<int, Conn> conns;
  std::map<std::string, std::vector<int>> watchers;  // 1.13 WATCH_KEY: key -> connections

  // ---- replies

  void flush(Conn& c) {
    while (!c.out.empty() && !c.dead) {
      ssize_t w = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (w <= 0) {
        c.dead = true;
        break;
      }
      c.out.erase(0, static_cast<size_t>(w));
    }
    if (c.out.size() > kMaxRequest) c.dead = true;  // not reading its replies
  }

  // A key was created, changed or deleted: wake the WAITs it completes, tell 1.13 watchers.
  void touched(const std::string& key, uint8_t how, const Bytes& before, const Bytes& after) {
    if (how != kKeyDeleted) {
      for (auto& [fd, c] : conns) {
        if (!c.waiting || c.dead || !c.awaited.erase(key) || !c.awaited.empty()) continue;
        c.waiting = false;
        put_u8(c.out, kStopWaiting);
        flush(c);
      }
    }
    auto it = watchers.find(key);
    if (it == watchers.end()) return;
    for (int fd : it->second) {
      auto ci = conns.find(fd);
      if (ci == conns.end() || ci->second.dead) continue;
      std::string& o = ci->second.out;
      put_u8(o, how);
      put_str(o, key);
      put_bytes(o, before.data(), before.size());
      put_bytes(o, after.data(), after.size());
      flush(ci->second);
    }
  }

  void store(const std::string& key, Bytes value) {
    auto it = map.find(key);
    bool created = it == map.end();
    Bytes before = created ? Bytes{} : std::move(it->second);
    Bytes& slot = map[key];
    slot = std::move(value);
    touched(key, created ? kKeyCreated : kKeyUpdated, before, slot);
  }

  // ---- requests; false: drop the connection (what c10d's server does when a handler throws)

  bool handle(Conn& c, Request& rq) {
    std::string& o = c.out;
    switch (rq.op) {
      case Op::validate:
        return false;  // only as the first request, handled by the caller
      case Op::ping:
        put_le(o, rq.word);
        return true;
      case Op::set:
        store(rq.keys[0], std::move(rq.values[0]));
        return true;
      case Op::append: {
        auto it = map.find(rq.keys[0]);
        if (it == map.end()) {
          store(rq.keys[0], std::move(rq.values[0]));
        } else {
          Bytes v = it->second;
          v.insert(v.end(), rq.values[0].begin(), rq.values[0].end());
          store(rq.keys[0], std::move(v));
        }
        return true;
      }
      case Op::compare_set: {
        const std::string& key = rq.keys[0];
        Bytes &expected = rq.values[0], &desired = rq.values[1];
        auto it = map.find(key);
        if (it == map.end()) {
          if (!expected.empty()) {
            put_bytes(o, expected.data(), expected.size());
            return true;
          }
          put_bytes(o, desired.data(), desired.size());
          store(key, std::move(desired));
        } else {
          if (it->second == expected) store(key, std::move(desired));
          const Bytes& now = map[key];
          put_bytes(o, now.data(), now.size());
        }
        return true;
      }
      case Op::get: {
        auto it = map.find(rq.keys[0]);
        if (it == map.end()) return false;
        put_bytes(o, it->second.data(), it->second.size());
        return true;
      }
      case Op::add: {
        int64_t v = rq.delta;
        auto it = map.find(rq.keys[0]);
        if (it != map.end()) {
          int64_t old;
          if (!parse_counter(it->second, old)) return false;
          v += old;
        }
        put_le<int64_t>(o, v);
        std::string s = std::to_string(v);
        store(rq.keys[0], Bytes(s.begin(), s.end()));
        return true;
      }
      case Op::check: {
        bool all = std::all_of(rq.keys.begin(), rq.keys.end(), [&](const auto& k) { return map.count(k); });
        put_u8(o, all ? kReady : kNotReady);
        return true;
      }
      case Op::wait: {
        if (c.waiting) return false;  // one WAIT at a time per connection
        c.awaited.clear();
        for (auto& k : rq.keys)
          if (!map.count(k)) c.awaited.insert(k);
        if (c.awaited.empty())
          put_u8(o, kStopWaiting);
        else
          c.waiting = true;
        return true;
      }
      case Op::cancel_wait:
        c.waiting = false;
        c.awaited.clear();
        put_u8(o, kWaitCanceled);
        return true;
      case Op::num_keys:
        put_le<int64_t>(o, static_cast<int64_t>(map.size()));
        return true;
      case Op::remove: {
        auto it = map.find(rq.keys[0]);
        if (it == map.end()) {
          put_le<int64_t>(o, 0);
          return true;
        }
        Bytes before = std::move(it->second);
        map.erase(it);
        put_le<int64_t>(o, 1);
        touched(rq.keys[0], kKeyDeleted, before, {});
        return true;
      }
      case Op::watch_key:
        watchers[rq.keys[0]].push_back(c.fd);
        put_u8(o, kKeyCallbackRegistered);
        return true;
      case Op::multi_get: {
        for (auto& k : rq.keys)
          if (!map.count(k)) return false;
        for (auto& k : rq.keys) put_bytes(o, map[k].data(), map[k].size());
        return true;
      }
      case Op::multi_set:
        for (size_t i = 0; i < rq.keys.size(); ++i) store(rq.keys[i], std::move(rq.values[i]));
        return true;
      case Op::invalid:
        return false;
    }
    return false;
  }

  // Parses and answers every complete request in c.in.
  void serve(Conn& c) {
    size_t pos = 0;
    while (!c.dead && pos < c.in.size()) {
      if (c.gen == Gen::unknown) {
        if (static_cast<uint8_t>(c.in[pos]) != 0) {
          c.gen = Gen::v113;
        } else {
          if (c.in.size() - pos < 5) break;
          uint32_t magic;
          std::memcpy(&magic, c.in.data() + pos + 1, 4);
          if (magic == kValidateMagic) {
            c.gen = Gen::v2;
            pos += 5;
            continue;
          }
          c.gen = Gen::v113;
        }
      }
      Request rq;
      size_t end = 0;
      Parse p = parse(c.gen, c.in, pos, rq, end);
      if (p == Parse::incomplete) break;
      if (p == Parse::bad || !handle(c, rq)) {
        c.dead = true;
        break;
      }
      pos = end;
    }
    c.in.erase(0, pos);
    if (c.in.size() > kMaxRequest) c.dead = true;
    flush(c);
  }

  void drop(int fd) {
    ::close(fd);
    conns.erase(fd);
    for (auto it = watchers.begin(); it != watchers.end();) {
      std::erase(it->second, fd);
      it = it->second.empty() ? watchers.erase(it) : std::next(it);
    }
  }

  void accept_all() {
    for (;;) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // EAGAIN, or out of fds (EMFILE): the backlog waits for the next round
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      conns[fd].fd = fd;
    }
  }

  void run() {
    std::vector<pollfd> fds;
    std::vector<char> buf(1 << 16);
    for (;;) {
      fds.clear();
      fds.push_back({wake[0], POLLIN, 0});
      fds.push_back({listen_fd, POLLIN, 0});
      for (auto& [fd, c] : conns) {
        short ev = c.out.size() < (1u << 20) ? POLLIN : 0;  // backpressure: read more once replies drain
        if (!c.out.empty()) ev |= POLLOUT;
        fds.push_back({fd, ev, 0});
      }
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) accept_all();
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        auto it = conns.find(fds[i].fd);
        if (it == conns.end()) continue;
        Conn& c = it->second;
        if (fds[i].revents & POLLOUT) flush(c);
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
          ssize_t n = ::recv(c.fd, buf.data(), buf.size(), MSG_DONTWAIT);
          if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) {
            c.dead = true;
          } else if (n > 0) {
            c.in.append(buf.data(), static_cast<size_t>(n));
            serve(c);
          }
        }
      }
      std::vector<int> dead;
      for (auto& [fd, c] : conns)
        if (c.dead) dead.push_back(fd);
      for (int fd : dead) drop(fd);
    }
  }
};

namespace {

// Binds [::]:port dual-stack (IPv4 too), or 0.0.0.0:port where IPv6 is unavailable.
int bind_listen(int port) {
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1, zero = 0;
  if (fd >= 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) return fd;
    int e = errno;
    ::close(fd);
    if (e == EADDRINUSE) fail("tcp store: port ", port, " is already in use (MASTER_PORT); pick a free port");
  }
  fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  CT_CHECK(fd >= 0, "tcp store: socket(): ", std::strerror(errno));
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    int e = errno;
    ::close(fd);
    if (e == EADDRINUSE) fail("tcp store: port ", port, " is already in use (MASTER_PORT); pick a free port");
    fail("tcp store: cannot bind port ", port, ": ", std::strerror(e));
  }
  return fd;
}

}  // namespace

TcpStoreServer::TcpStoreServer(int port) : impl_(std::make_unique<Impl>()) {
  CT_CHECK(port >= 0 && port < 65536, "tcp store: port ", port, " out of range 0..65535");
  int fd = bind_listen(port);
  if (::listen(fd, 1024) != 0) {
    int e = errno;
    ::close(fd);
    fail("tcp store: listen on port ", port, ": ", std::strerror(e));
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  impl_->port = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                                 : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  impl_->listen_fd = fd;
  if (::pipe2(impl_->wake, O_CLOEXEC) != 0) {
    ::close(fd);
    fail("tcp store: pipe(): ", std::strerror(errno));
  }
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

TcpStoreServer::~TcpStoreServer() {
  char c = 1;
  ssize_t w = ::write(impl_->wake[1], &c, 1);
  (void)w;
  impl_->thread.join();
  for (auto& [fd, conn] : impl_->conns) ::close(fd);
  ::close(impl_->listen_fd);
  ::close(impl_->wake[0]);
  ::close(impl_->wake[1]);
}

int TcpStoreServer::port() const {
  return impl_->port;
}

}  // namespace ct::comm

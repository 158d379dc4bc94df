// Store implementations: the in-memory map (threaded tests), the prefix view, and the TCP server/client pair.
// Wire format of the TCP store (ours, little-endian): request = u8 command, u32 key count, keys as (u32 len,
// bytes), u32 value length, value bytes; reply = u8 status (0 ok, 1 absent), u32 length, bytes. Blocking
// commands (get, wait) are answered by the server only once their keys exist; the client bounds the wait with
// poll() and, on timeout, drops the connection (the late answer must not be read as the next reply).
#include "comm/store.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "core/error.h"

namespace ct::comm {

using Clock = std::chrono::steady_clock;

void Store::set_string(const std::string& key, const std::string& value) {
  set(key, Bytes(value.begin(), value.end()));
}

std::string Store::get_string(const std::string& key, Timeout timeout) {
  Bytes b = get(key, timeout);
  return std::string(b.begin(), b.end());
}

namespace {

std::string join_keys(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", '" : "'") + keys[i] + "'";
  return s;
}

int64_t parse_counter(const Store::Bytes& b) {
  if (b.empty()) return 0;
  return std::stoll(std::string(b.begin(), b.end()));
}

Store::Bytes counter_bytes(int64_t v) {
  std::string s = std::to_string(v);
  return Store::Bytes(s.begin(), s.end());
}

// ---------------------------------------------------------------- in-memory

class MemoryStore final : public Store {
 public:
  void set(const std::string& key, const Bytes& value) override {
    std::lock_guard<std::mutex> lock(mu_);
    map_[key] = value;
    cv_.notify_all();
  }
  Bytes get(const std::string& key, Timeout timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    wait_locked(lock, {key}, timeout);
    return map_.at(key);
  }
  int64_t add(const std::string& key, int64_t delta) override {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t v = parse_counter(map_[key]) + delta;
    map_[key] = counter_bytes(v);
    cv_.notify_all();
    return v;
  }
  bool check(const std::vector<std::string>& keys) override {
    std::lock_guard<std::mutex> lock(mu_);
    return all_present(keys);
  }
  void wait(const std::vector<std::string>& keys, Timeout timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    wait_locked(lock, keys, timeout);
  }
  bool remove(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    return map_.erase(key) > 0;
  }
  std::string describe() const override { return "memory store"; }

 private:
  bool all_present(const std::vector<std::string>& keys) const {
    for (auto& k : keys)
      if (!map_.count(k)) return false;
    return true;
  }
  void wait_locked(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys,
                   Timeout timeout) {
    if (cv_.wait_for(lock, timeout, [&] { return all_present(keys); })) return;
    std::vector<std::string> missing;
    for (auto& k : keys)
      if (!map_.count(k)) missing.push_back(k);
    fail("memory store: timed out after ", timeout.count(), " ms waiting for key(s) ", join_keys(missing));
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Bytes> map_;
};

// ---------------------------------------------------------------- prefix

class PrefixStore final : public Store {
 public:
  PrefixStore(std::shared_ptr<Store> inner, std::string prefix)
      : inner_(std::move(inner)), prefix_(prefix + "/") {}
  void set(const std::string& key, const Bytes& value) override { inner_->set(prefix_ + key, value); }
  Bytes get(const std::string& key, Timeout timeout) override { return inner_->get(prefix_ + key, timeout); }
  int64_t add(const std::string& key, int64_t delta) override { return inner_->add(prefix_ + key, delta); }
  bool check(const std::vector<std::string>& keys) override { return inner_->check(prefixed(keys)); }
  void wait(const std::vector<std::string>& keys, Timeout timeout) override {
    inner_->wait(prefixed(keys), timeout);
  }
  bool remove(const std::string& key) override { return inner_->remove(prefix_ + key); }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const {
    std::vector<std::string> out;
    for (auto& k : keys) out.push_back(prefix_ + k);
    return out;
  }
  std::shared_ptr<Store> inner_;
  std::string prefix_;
};

// ---------------------------------------------------------------- wire helpers

enum Cmd : uint8_t { kSet = 1, kGet, kAdd, kCheck, kWait, kRemove };

void put_u32(std::string& s, uint32_t v) {
  s.append(reinterpret_cast<const char*>(&v), 4);
}

std::string encode(Cmd cmd, const std::vector<std::string>& keys, const Store::Bytes& value) {
  std::string s(1, static_cast<char>(cmd));
  put_u32(s, static_cast<uint32_t>(keys.size()));
  for (auto& k : keys) {
    put_u32(s, static_cast<uint32_t>(k.size()));
    s += k;
  }
  put_u32(s, static_cast<uint32_t>(value.size()));
  s.append(reinterpret_cast<const char*>(value.data()), value.size());
  return s;
}

// Parses one complete request from buf; returns bytes consumed or 0 if incomplete.
size_t decode(const std::string& buf, Cmd& cmd, std::vector<std::string>& keys, Store::Bytes& value) {
  size_t p = 0;
  auto u32 = [&](uint32_t& v) {
    if (buf.size() < p + 4) return false;
    std::memcpy(&v, buf.data() + p, 4);
    p += 4;
    return true;
  };
  if (buf.empty()) return 0;
  cmd = static_cast<Cmd>(buf[0]);
  p = 1;
  uint32_t nkeys, len;
  if (!u32(nkeys)) return 0;
  keys.clear();
  for (uint32_t i = 0; i < nkeys; ++i) {
    if (!u32(len) || buf.size() < p + len) return 0;
    keys.emplace_back(buf.data() + p, len);
    p += len;
  }
  if (!u32(len) || buf.size() < p + len) return 0;
  value.assign(buf.begin() + p, buf.begin() + p + len);
  return p + len;
}

bool send_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

std::string reply(uint8_t status, const Store::Bytes& value) {
  std::string s(1, static_cast<char>(status));
  put_u32(s, static_cast<uint32_t>(value.size()));
  s.append(reinterpret_cast<const char*>(value.data()), value.size());
  return s;
}

}  // namespace

std::shared_ptr<Store> make_memory_store() {
  return std::make_shared<MemoryStore>();
}

std::shared_ptr<Store> make_prefix_store(std::shared_ptr<Store> inner, const std::string& prefix) {
  return std::make_shared<PrefixStore>(std::move(inner), prefix);
}

// ---------------------------------------------------------------- server

struct TcpStoreServer::Impl {
  struct Client {
    int fd;
    std::string in;
  };
  struct Waiter {
    int fd;
    Cmd cmd;
    std::vector<std::string> keys;
  };

  int listen_fd = -1;
  int wake[2] = {-1, -1};
  int port = 0;
  std::thread thread;
  std::map<std::string, Store::Bytes> map;
  std::vector<Client> clients;
  std::vector<Waiter> waiters;

  bool present(const std::vector<std::string>& keys) const {
    for (auto& k : keys)
      if (!map.count(k)) return false;
    return true;
  }

  // Returns false when the client must be dropped.
  bool handle(int fd, Cmd cmd, std::vector<std::string>& keys, Store::Bytes& value) {
    switch (cmd) {
      case kSet:
        if (keys.size() != 1) return false;
        map[keys[0]] = value;
        if (!send_all(fd, reply(0, {}).data(), 5)) return false;
        wake_waiters();
        return true;
      case kAdd: {
        if (keys.size() != 1 || value.size() != 8) return false;
        int64_t delta;
        std::memcpy(&delta, value.data(), 8);
        int64_t v = parse_counter(map[keys[0]]) + delta;
        map[keys[0]] = counter_bytes(v);
        Store::Bytes out(8);
        std::memcpy(out.data(), &v, 8);
        std::string r = reply(0, out);
        if (!send_all(fd, r.data(), r.size())) return false;
        wake_waiters();
        return true;
      }
      case kCheck: {
        std::string r = reply(present(keys) ? 0 : 1, {});
        return send_all(fd, r.data(), r.size());
      }
      case kRemove: {
        std::string r = reply(map.erase(keys.at(0)) ? 0 : 1, {});
        return send_all(fd, r.data(), r.size());
      }
      case kGet:
      case kWait:
        if (keys.empty() || (cmd == kGet && keys.size() != 1)) return false;
        waiters.push_back({fd, cmd, keys});
        wake_waiters();
        return true;
    }
    return false;
  }

  void wake_waiters() {
    for (size_t i = 0; i < waiters.size();) {
      Waiter& w = waiters[i];
      if (!present(w.keys)) {
        ++i;
        continue;
      }
      std::string r = reply(0, w.cmd == kGet ? map[w.keys[0]] : Store::Bytes{});
      send_all(w.fd, r.data(), r.size());  // a dead client is noticed by its next read
      waiters.erase(waiters.begin() + static_cast<long>(i));
    }
  }

  void drop(int fd) {
    ::close(fd);
    waiters.erase(std::remove_if(waiters.begin(), waiters.end(), [&](const Waiter& w) { return w.fd == fd; }),
                  waiters.end());
    clients.erase(std::remove_if(clients.begin(), clients.end(), [&](const Client& c) { return c.fd == fd; }),
                  clients.end());
  }

  void run() {
    std::vector<pollfd> fds;
    char buf[65536];
    for (;;) {
      fds.clear();
      fds.push_back({wake[0], POLLIN, 0});
      fds.push_back({listen_fd, POLLIN, 0});
      for (auto& c : clients) fds.push_back({c.fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) {
        int fd = ::accept(listen_fd, nullptr, nullptr);
        if (fd >= 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          clients.push_back({fd, {}});
        }
      }
      std::vector<int> dead;
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        int fd = fds[i].fd;
        ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) {
          if (n < 0 && errno == EINTR) continue;
          dead.push_back(fd);
          continue;
        }
        auto it = std::find_if(clients.begin(), clients.end(), [&](const Client& c) { return c.fd == fd; });
        it->in.append(buf, static_cast<size_t>(n));
        Cmd cmd;
        std::vector<std::string> keys;
        Store::Bytes value;
        for (;;) {
          size_t used = decode(it->in, cmd, keys, value);
          if (!used) break;
          it->in.erase(0, used);
          if (!handle(fd, cmd, keys, value)) {
            dead.push_back(fd);
            break;
          }
          it = std::find_if(clients.begin(), clients.end(), [&](const Client& c) { return c.fd == fd; });
        }
      }
      for (int fd : dead) drop(fd);
    }
  }
};

TcpStoreServer::TcpStoreServer(int port) : impl_(std::make_unique<Impl>()) {
  CT_CHECK(port >= 0 && port < 65536, "tcp store: port ", port, " out of range 0..65535");
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  CT_CHECK(fd >= 0, "tcp store: socket(): ", std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int e = errno;
    ::close(fd);
    if (e == EADDRINUSE) fail("tcp store: port ", port, " is already in use (MASTER_PORT); pick a free port");
    fail("tcp store: cannot bind port ", port, ": ", std::strerror(e));
  }
  if (::listen(fd, 1024) != 0) {
    int e = errno;
    ::close(fd);
    fail("tcp store: listen on port ", port, ": ", std::strerror(e));
  }
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  impl_->port = ntohs(addr.sin_port);
  impl_->listen_fd = fd;
  CT_CHECK(::pipe2(impl_->wake, O_CLOEXEC) == 0, "tcp store: pipe(): ", std::strerror(errno));
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

TcpStoreServer::~TcpStoreServer() {
  char c = 1;
  ssize_t w = ::write(impl_->wake[1], &c, 1);
  (void)w;
  impl_->thread.join();
  for (auto& cl : impl_->clients) ::close(cl.fd);
  ::close(impl_->listen_fd);
  ::close(impl_->wake[0]);
  ::close(impl_->wake[1]);
}

int TcpStoreServer::port() const {
  return impl_->port;
}

// ---------------------------------------------------------------- client

namespace {

class TcpStore final : public Store {
 public:
  TcpStore(std::string host, int port, Timeout connect_timeout)
      : host_(std::move(host)), port_(port), connect_timeout_(connect_timeout) {
    CT_CHECK(port_ > 0 && port_ < 65536, "tcp store: port ", port_, " out of range 1..65535 (MASTER_PORT)");
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    int rc = ::getaddrinfo(host_.c_str(), nullptr, &hints, &res);
    if (rc != 0 || !res)
      fail("tcp store: cannot resolve MASTER_ADDR '", host_, "': ", rc ? ::gai_strerror(rc) : "no address");
    addr_ = *reinterpret_cast<sockaddr_in*>(res->ai_addr);
    addr_.sin_port = htons(static_cast<uint16_t>(port_));
    ::freeaddrinfo(res);
    std::lock_guard<std::mutex> lock(mu_);
    connect_locked();
  }
  ~TcpStore() override {
    if (fd_ >= 0) ::close(fd_);
  }

  void set(const std::string& key, const Bytes& value) override {
    request(kSet, {key}, value, connect_timeout_);
  }
  Bytes get(const std::string& key, Timeout timeout) override {
    return request(kGet, {key}, {}, timeout).second;
  }
  int64_t add(const std::string& key, int64_t delta) override {
    Bytes v(8);
    std::memcpy(v.data(), &delta, 8);
    Bytes r = request(kAdd, {key}, v, connect_timeout_).second;
    int64_t out;
    CT_CHECK(r.size() == 8, describe(), ": malformed reply to add('", key, "')");
    std::memcpy(&out, r.data(), 8);
    return out;
  }
  bool check(const std::vector<std::string>& keys) override {
    return request(kCheck, keys, {}, connect_timeout_).first == 0;
  }
  void wait(const std::vector<std::string>& keys, Timeout timeout) override {
    if (keys.empty()) return;
    request(kWait, keys, {}, timeout);
  }
  bool remove(const std::string& key) override {
    return request(kRemove, {key}, {}, connect_timeout_).first == 0;
  }
  std::string describe() const override { return str("tcp store ", host_, ":", port_); }

 private:
  void connect_locked() {
    auto start = Clock::now();
    auto deadline = start + connect_timeout_;
    auto nap = std::chrono::milliseconds(10);
    std::string last = "no attempt";
    for (;;) {
      int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      CT_CHECK(fd >= 0, "tcp store: socket(): ", std::strerror(errno));
      if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr_), sizeof(addr_)) == 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        fd_ = fd;
        return;
      }
      last = std::strerror(errno);
      ::close(fd);
      if (Clock::now() + nap > deadline) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
        fail("tcp store: could not connect to ", host_, ":", port_, " (MASTER_ADDR:MASTER_PORT) after ", ms,
             " ms: ", last);
      }
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::milliseconds(500));
    }
  }

  std::pair<uint8_t, Bytes> request(Cmd cmd, const std::vector<std::string>& keys, const Bytes& value,
                                    Timeout timeout) {
    std::lock_guard<std::mutex> lock(mu_);
    if (fd_ < 0) connect_locked();
    std::string msg = encode(cmd, keys, value);
    if (!send_all(fd_, msg.data(), msg.size())) broken("sending to");
    auto start = Clock::now();
    auto deadline = start + timeout;
    std::string in;
    size_t want = 5;
    char buf[65536];
    while (in.size() < want) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left < 0) left = 0;
      pollfd p{fd_, POLLIN, 0};
      int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) {
        // The server may still answer later; that answer must not be taken for the next reply.
        ::close(fd_);
        fd_ = -1;
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
        fail(describe(), ": timed out after ", ms, " ms waiting for key(s) ", join_keys(keys));
      }
      ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) broken("reading from");
      in.append(buf, static_cast<size_t>(n));
      if (in.size() >= 5) {
        uint32_t len;
        std::memcpy(&len, in.data() + 1, 4);
        want = 5 + len;
      }
    }
    return {static_cast<uint8_t>(in[0]), Bytes(in.begin() + 5, in.begin() + static_cast<long>(want))};
  }

  [[noreturn]] void broken(const char* what) {
    ::close(fd_);
    fd_ = -1;
    fail(describe(), ": connection lost ", what, " the server (did rank 0 / the launcher exit?)");
  }

  std::string host_;
  int port_;
  Timeout connect_timeout_;
  sockaddr_in addr_{};
  std::mutex mu_;
  int fd_ = -1;
};

}  // namespace

std::shared_ptr<Store> connect_tcp_store(const std::string& host, int port, Store::Timeout connect_timeout) {
  return std::make_shared<TcpStore>(host, port, connect_timeout);
}

}  // namespace ct::comm

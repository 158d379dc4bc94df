// Store: the key-value rendezvous every env-var launch starts from (c10d TCPStore, gloo rendezvous/store.h).
// Ranks publish small values (addresses, nonces, arrival marks) and wait for each other's; every wait has a
// timeout and its error names the key(s) still missing and the elapsed time. Two implementations:
// - TcpStore: a server thread (hosted by rank 0, or by a launcher) at MASTER_ADDR:MASTER_PORT; clients
// connect
//   with retry until the timeout.
// - MemoryStore: one map shared by threads of one process (gloo base_test spawn style tests).
// PrefixStore namespaces keys (one job's or one transport's keys apart from another's).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ct::comm {

class Store {
 public:
  using Timeout = std::chrono::milliseconds;
  using Bytes = std::vector<uint8_t>;

  virtual ~Store() = default;

  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Waits until key exists; throws ct::Error "store <where>: timed out after N ms waiting for key 'k'".
  virtual Bytes get(const std::string& key, Timeout timeout) = 0;
  // Atomic counter: adds delta to the integer stored at key (0 if absent) and returns the new value.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // True when every key exists (no waiting).
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // Waits until every key exists; the timeout error lists the keys still missing.
  virtual void wait(const std::vector<std::string>& keys, Timeout timeout) = 0;
  // Removes key; false if it was absent.
  virtual bool remove(const std::string& key) = 0;
  // "tcp store 127.0.0.1:29500": how errors name this store.
  virtual std::string describe() const = 0;

  // Conveniences over the byte interface.
  void set_string(const std::string& key, const std::string& value);
  std::string get_string(const std::string& key, Timeout timeout);
};

// In-process store; share one instance between threads.
std::shared_ptr<Store> make_memory_store();

// Keys of `inner` seen through "<prefix>/".
std::shared_ptr<Store> make_prefix_store(std::shared_ptr<Store> inner, const std::string& prefix);

// The server half of TcpStore: listens on port (all interfaces) and answers from a background thread until
// destroyed. Port 0 picks a free port (port() says which). Throws "port N in use" if bind fails.
class TcpStoreServer {
 public:
  explicit TcpStoreServer(int port);
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Client of a TcpStoreServer at host:port; retries the connection until `connect_timeout` (then throws naming
// host:port and the elapsed time). Thread-safe (one request in flight at a time).
std::shared_ptr<Store> connect_tcp_store(const std::string& host, int port, Store::Timeout connect_timeout);

}  // namespace ct::comm

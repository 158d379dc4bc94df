// Store: the key-value rendezvous every env-var launch starts from (c10d TCPStore, gloo rendezvous/store.h).
// Ranks publish small values (addresses, nonces, arrival marks) and wait for each other's; every wait has a
// timeout and its error names the key(s) still missing and the elapsed time. Implementations:
// - TCP: TcpStoreServer (hosted by rank 0, or by a launcher) and connect_tcp_store clients, both speaking
//   PyTorch's c10d TCPStore wire format, so torch's TCPStore clients/servers (1.13 and 2.x) and ours mix
//   (docs/store-protocol.md; wire details in tcp_store_wire.h).
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
  // c10d's compareSet, atomic: if key holds `expected`, store `desired`; returns the value key holds
  // afterwards. A missing key with an empty `expected` is created with `desired` (and `desired` returned); a
  // missing key with a non-empty `expected` stays missing and `expected` is returned (c10d's quirk, kept for
  // compatibility). So the swap happened iff the result equals `desired` (when expected != desired).
  virtual Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) = 0;
  // Keys in the whole store (a prefix view counts its inner store's keys too, like c10d's PrefixStore).
  virtual int64_t num_keys() = 0;
  // "tcp store 127.0.0.1:29500 (c10d 2.x)": how errors name this store.
  virtual std::string describe() const = 0;

  // Conveniences over the byte interface.
  void set_string(const std::string& key, const std::string& value);
  std::string get_string(const std::string& key, Timeout timeout);
};

// In-process store; share one instance between threads.
std::shared_ptr<Store> make_memory_store();

// Keys of `inner` seen through "<prefix>/".
std::shared_ptr<Store> make_prefix_store(std::shared_ptr<Store> inner, const std::string& prefix);

// A c10d-compatible TCPStore server: listens on port (all interfaces, IPv6 dual-stack when available) and
// answers from one background thread (poll, non-blocking sockets) until destroyed. It serves 1.13 and 2.x
// clients at once, deciding per connection from its first request (2.x opens with VALIDATE). Port 0 picks a
// free port (port() says which). Throws "port N is already in use" if bind fails.
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

// Client of a c10d TCPStore at host:port: ours, torch 1.13's or torch 2.x's (found out by a probe, see
// tcp_store_client.cpp). Keys travel with a leading "/" like c10d's client adds, so Python's store.set("k")
// and our set("k") name the same key. Retries the connection until `connect_timeout` (then throws naming
// host:port and the elapsed time); requests other than get/wait are bounded by `connect_timeout` too.
// Thread-safe (one request in flight at a time). describe() says "tcp store host:port (c10d 1.13|2.x)".
std::shared_ptr<Store> connect_tcp_store(const std::string& host, int port, Store::Timeout connect_timeout);

}  // namespace ct::comm

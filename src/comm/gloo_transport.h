// GlooTransport: the Transport over Gloo's TCP transport, used for env-var (torchrun-style) launches. Members
// rendezvous through a gloo::rendezvous::Store (comm-core's TCP key-value store wrapped by GlooStore, or any
// other), under a prefix so that several groups share one store. Gloo's own timeouts bound every op; its
// exceptions come back as ct::Error naming the op, the group and, where Gloo says it, the peer.
#pragma once

#include <memory>
#include <string>

#include "comm/store.h"
#include "comm/transport.h"

#include <gloo/rendezvous/store.h>

namespace gloo {
class Context;
namespace transport {
class Device;
}
}  // namespace gloo

namespace ct::comm {

struct GlooTransportOptions {
  // Address this member listens on; other members connect to it. Must be reachable from every member: in a
  // multi-node job the address of the interface facing the store host (see local_address_toward()).
  std::string hostname = "127.0.0.1";
  // Bounds the connection phase (store waits and TCP connects).
  Transport::Timeout connect_timeout{std::chrono::seconds(300)};
};

class GlooTransport final : public Transport {
 public:
  // Collective over the group: every member calls with the same store contents, prefix and ranks, and its own
  // index. ranks are the members' global ranks (for messages).
  GlooTransport(gloo::rendezvous::Store& store, const std::string& prefix, std::vector<int> ranks, int index,
                const GlooTransportOptions& options = {});
  ~GlooTransport() override;

  const char* kind() const override { return "gloo"; }

  void allreduce(float* data, size_t count, WireReduce op, Timeout timeout) override;
  void reduce_scatter(const float* in, float* out, size_t count, WireReduce op, Timeout timeout) override;
  void allgather(const void* in, void* out, size_t bytes_per_member, Timeout timeout) override;
  void alltoall(const void* in, void* out, size_t bytes_per_member, Timeout timeout) override;
  void broadcast(void* data, size_t bytes, int root, Timeout timeout) override;
  void barrier(Timeout timeout) override;

  // The underlying context, for the plain-Gloo benchmark baseline.
  const std::shared_ptr<gloo::Context>& context() const { return context_; }

 private:
  uint32_t next_tag() { return tag_++; }
  std::string suspects(const std::string& gloo_message) const;

  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
  uint32_t tag_ = 0;
};

// Gloo's rendezvous interface over our Store (TCP or memory), so the job's key-value store also connects
// Gloo. Gloo's untimed waits use `timeout`. Keep `store` alive as long as the adapter.
std::unique_ptr<gloo::rendezvous::Store> make_gloo_store(std::shared_ptr<Store> store,
                                                         Transport::Timeout timeout);

// The local IPv4 address the kernel would use to reach host (a UDP connect, no packet sent): how a member
// picks the interface facing the store host when every "node" has its own network (namespaces, real hosts).
// Throws naming host.
std::string local_address_toward(const std::string& host);

}  // namespace ct::comm

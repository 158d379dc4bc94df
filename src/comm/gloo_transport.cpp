// GlooTransport: Gloo TCP collectives behind the Transport interface; reduce_scatter is our own ring over
// Gloo's unbound buffers (Gloo 2022 has no new-style reduce_scatter), which also lets a timeout name the
// neighbour.
#include "comm/gloo_transport.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>
#include <algorithm>
#include <cstring>
#include <sstream>

#include "comm/comm_error.h"
#include "core/error.h"

namespace ct::comm {
namespace {

using Clock = std::chrono::steady_clock;

template <class Op>
void reduce_into(float* c, const float* a, const float* b, size_t n, Op op) {
  for (size_t i = 0; i < n; ++i) c[i] = op(a[i], b[i]);
}

void reduce_f32(WireReduce op, float* c, const float* a, const float* b, size_t n) {
  switch (op) {
    case WireReduce::kSum:
      reduce_into(c, a, b, n, [](float x, float y) { return x + y; });
      break;
    case WireReduce::kMax:
      reduce_into(c, a, b, n, [](float x, float y) { return std::max(x, y); });
      break;
    case WireReduce::kMin:
      reduce_into(c, a, b, n, [](float x, float y) { return std::min(x, y); });
      break;
  }
}

gloo::AllreduceOptions::Func gloo_func(WireReduce op) {
  return [op](void* c, const void* a, const void* b, size_t n) {
    reduce_f32(op, static_cast<float*>(c), static_cast<const float*>(a), static_cast<const float*>(b), n);
  };
}

long ms_since(Clock::time_point t0) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count());
}

// Slot prefix for our own point-to-point traffic; Gloo's built-in collectives use small prefixes.
constexpr uint8_t kRingSlotPrefix = 0x7c;

class GlooStore final : public gloo::rendezvous::Store {
 public:
  GlooStore(std::shared_ptr<ct::comm::Store> store, Transport::Timeout timeout)
      : store_(std::move(store)), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, ct::comm::Store::Bytes(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    auto v = store_->get(key, timeout_);
    return std::vector<char>(v.begin(), v.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<ct::comm::Store> store_;
  Transport::Timeout timeout_;
};

}  // namespace

std::unique_ptr<gloo::rendezvous::Store> make_gloo_store(std::shared_ptr<Store> store,
                                                         Transport::Timeout timeout) {
  return std::make_unique<GlooStore>(std::move(store), timeout);
}

std::string local_address_toward(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), "9", &hints, &res);
  CT_CHECK(rc == 0 && res, "cannot resolve host '", host, "': ", gai_strerror(rc));
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  CT_CHECK(fd >= 0, "socket() failed: ", std::strerror(errno));
  rc = connect(fd, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  if (rc == 0) rc = getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
  int err = errno;
  close(fd);
  CT_CHECK(rc == 0, "no route to host '", host, "': ", std::strerror(err));
  char text[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text));
  return text;
}

GlooTransport::GlooTransport(gloo::rendezvous::Store& store, const std::string& prefix,
                             std::vector<int> ranks, int index, const GlooTransportOptions& options)
    : Transport(std::move(ranks), index) {
  auto t0 = Clock::now();
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = options.hostname;
    attr.ai_family = AF_INET;
    device_ = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(index, size());
    context->setTimeout(options.connect_timeout);
    gloo::rendezvous::PrefixStore prefixed(prefix, store);
    context->connectFullMesh(prefixed, device_);
    context_ = context;
  } catch (const std::exception& e) {  // gloo's own errors and the store's
    fail("gloo connect of ", describe(), " via store prefix '", prefix, "' on ", options.hostname,
         " failed after ", ms_since(t0), " ms: ", e.what());
  }
}

GlooTransport::~GlooTransport() = default;

// Gloo's exceptions become one-line ct::Errors carrying the op, group and elapsed time (Gloo's text names the
// peer address when a connection broke).
#define CT_GLOO_CALL(opname, ...)                                                                 \
  do {                                                                                            \
    auto t0_ = Clock::now();                                                                      \
    try {                                                                                         \
      __VA_ARGS__;                                                                                \
    } catch (const gloo::Exception& e) {                                                          \
      mark_comm_failed();                                                                         \
      fail("gloo ", opname, " failed in ", describe(), " after ", ms_since(t0_), " ms (timeout ", \
           timeout.count(), " ms", suspects(e.what()), "): ", e.what());                          \
    }                                                                                             \
  } while (0)

// Gloo's texts name no rank: a timeout does not say which member stayed silent, a broken connection names
// only the peer's address. Name the other members as suspects (with two members, the one it must be).
std::string GlooTransport::suspects(const std::string& what) const {
  const bool timed_out = what.find("Timed out") != std::string::npos;
  const bool broken = what.find("closed by peer") != std::string::npos ||
                      what.find("reset by peer") != std::string::npos ||
                      what.find("Broken pipe") != std::string::npos;
  if (!timed_out && !broken) return "";
  std::ostringstream s;
  if (broken && size() == 2) {
    s << "; rank " << ranks()[static_cast<size_t>(1 - index())] << " closed the connection (exited or died?)";
    return s.str();
  }
  s << (timed_out ? "; no answer from rank(s) " : "; connection lost to one of rank(s) ");
  bool first = true;
  for (int i = 0; i < size(); ++i)
    if (i != index()) {
      s << (first ? "" : ",") << ranks()[static_cast<size_t>(i)];
      first = false;
    }
  s << " (one or more)";
  return s.str();
}

void GlooTransport::allreduce(float* data, size_t count, WireReduce op, Timeout timeout) {
  if (size() == 1 || count == 0) return;
  gloo::AllreduceOptions opts(context_);
  opts.setInput(data, count);
  opts.setOutput(data, count);
  opts.setReduceFunction(gloo_func(op));
  opts.setTag(next_tag());
  opts.setTimeout(timeout);
  CT_GLOO_CALL("allreduce", gloo::allreduce(opts));
}

void GlooTransport::reduce_scatter(const float* in, float* out, size_t count, WireReduce op,
                                   Timeout timeout) {
  const int p = size(), me = index();
  if (p == 1) {
    if (count > 0 && out != in) std::memmove(out, in, count * sizeof(float));
    return;
  }
  if (count == 0) return;
  // Ring: at step s I pass my partial sum of block (me-1-s) to the right and fold my own contribution into
  // the partial of block (me-2-s) arriving from the left; after p-1 steps the partial in hand is block me,
  // complete.
  const int right = (me + 1) % p, left = (me - 1 + p) % p;
  const size_t bytes = count * sizeof(float);
  std::vector<float> send(count), recv(count);
  auto block = [&](int b) { return in + static_cast<size_t>((b % p + p) % p) * count; };
  std::memcpy(send.data(), block(me - 1), bytes);
  auto send_buf = context_->createUnboundBuffer(send.data(), bytes);
  auto recv_buf = context_->createUnboundBuffer(recv.data(), bytes);
  const uint64_t slot = gloo::Slot::build(kRingSlotPrefix, next_tag());
  auto t0 = Clock::now();
  for (int s = 0; s < p - 1; ++s) {
    try {
      recv_buf->recv(left, slot);
      send_buf->send(right, slot);
      recv_buf->waitRecv(timeout);
      send_buf->waitSend(timeout);
    } catch (const gloo::Exception& e) {
      mark_comm_failed();
      fail("gloo reduce_scatter step ", s, " failed in ", describe(), " after ", ms_since(t0),
           " ms waiting on rank ", ranks()[static_cast<size_t>(left)], " (left) / rank ",
           ranks()[static_cast<size_t>(right)], " (right), timeout ", timeout.count(), " ms: ", e.what());
    }
    float* dst = s == p - 2 ? out : send.data();
    reduce_f32(op, dst, recv.data(), block(me - 2 - s), count);
  }
}

void GlooTransport::allgather(const void* in, void* out, size_t bytes, Timeout timeout) {
  char* mine = static_cast<char*>(out) + bytes * static_cast<size_t>(index());
  if (size() == 1 || bytes == 0) {
    if (bytes > 0 && in != mine) std::memmove(mine, in, bytes);
    return;
  }
  // Gloo copies the input into its own block; an input already in place is passed through a copy.
  std::vector<char> copy;
  if (in == mine) {
    copy.assign(mine, mine + bytes);
    in = copy.data();
  }
  gloo::AllgatherOptions opts(context_);
  opts.setInput(const_cast<char*>(static_cast<const char*>(in)), bytes);
  opts.setOutput(static_cast<char*>(out), bytes * static_cast<size_t>(size()));
  opts.setTag(next_tag());
  opts.setTimeout(timeout);
  CT_GLOO_CALL("allgather", gloo::allgather(opts));
}

void GlooTransport::alltoall(const void* in, void* out, size_t bytes, Timeout timeout) {
  const size_t total = bytes * static_cast<size_t>(size());
  if (size() == 1 || bytes == 0) {
    if (total > 0 && in != out) std::memmove(out, in, total);
    return;
  }
  gloo::AlltoallOptions opts(context_);
  opts.setInput(const_cast<char*>(static_cast<const char*>(in)), total);
  opts.setOutput(static_cast<char*>(out), total);
  opts.setTag(next_tag());
  opts.setTimeout(timeout);
  CT_GLOO_CALL("alltoall", gloo::alltoall(opts));
}

void GlooTransport::broadcast(void* data, size_t bytes, int root, Timeout timeout) {
  CT_CHECK(root >= 0 && root < size(), "gloo broadcast: root ", root, " outside ", describe());
  if (size() == 1 || bytes == 0) return;
  gloo::BroadcastOptions opts(context_);
  opts.setOutput(static_cast<char*>(data), bytes);
  opts.setRoot(root);
  opts.setTag(next_tag());
  opts.setTimeout(timeout);
  CT_GLOO_CALL("broadcast", gloo::broadcast(opts));
}

void GlooTransport::barrier(Timeout timeout) {
  if (size() == 1) return;
  gloo::BarrierOptions opts(context_);
  opts.setTag(next_tag());
  opts.setTimeout(timeout);
  CT_GLOO_CALL("barrier", gloo::barrier(opts));
}

}  // namespace ct::comm

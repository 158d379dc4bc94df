// GlooTransport over loopback TCP with ranks as threads in one process (gloo's own test style): every op
// against a straightforward reference for 1-4 members and awkward sizes, bf16 rounding once, and the
// timeout/bad-input errors.
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include <gloo/rendezvous/store.h>

#include "comm/gloo_transport.h"
#include "comm_test_util.h"
#include "core/error.h"

namespace ct::comm {
namespace {

using namespace std::chrono_literals;

// In-memory rendezvous store with a real wait timeout (the test must not hang when a member never joins).
class MemStore : public gloo::rendezvous::Store {
 public:
  void set(const std::string& key, const std::vector<char>& data) override {
    std::lock_guard<std::mutex> lock(mu_);
    map_[key] = data;
    cv_.notify_all();
  }
  std::vector<char> get(const std::string& key) override {
    wait({key}, 10s);
    std::lock_guard<std::mutex> lock(mu_);
    return map_.at(key);
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, 10s); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    bool ok = cv_.wait_for(lock, timeout, [&] {
      for (const auto& k : keys)
        if (!map_.count(k)) return false;
      return true;
    });
    if (!ok) fail("mem store: timed out after ", timeout.count(), " ms waiting for key ", keys.front());
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<char>> map_;
};

std::vector<int> ranks_of(int p) {
  std::vector<int> r;
  for (int i = 0; i < p; ++i) r.push_back(10 + i);  // global ranks differ from indices on purpose
  return r;
}

// Runs fn(transport) on p threads; rethrows the first failure.
void spawn(int p, const std::function<void(GlooTransport&)>& fn) {
  MemStore store;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i)
    threads.emplace_back([&, i] {
      try {
        GlooTransportOptions opt;
        opt.connect_timeout = 20s;
        GlooTransport t(store, "test", ranks_of(p), i, opt);
        fn(t);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(i)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < p; ++i) ASSERT_EQ(errors[static_cast<size_t>(i)], "") << "member " << i;
}

// Integer-valued data: sums are exact in f32 whatever the reduction order.
float value(int member, size_t i) {
  return static_cast<float>(static_cast<int>((i * 7 + member * 13) % 61) - 30);
}

const size_t kSizes[] = {0, 1, 7, 17, 1000, 70001};

TEST(GlooTransport, AllreduceEveryOpAndSize) {
  for (int p = 1; p <= 4; ++p)
    spawn(p, [p](GlooTransport& t) {
      EXPECT_EQ(t.size(), p);
      for (size_t n : kSizes)
        for (WireReduce op : {WireReduce::kSum, WireReduce::kMax, WireReduce::kMin}) {
          std::vector<float> data(n);
          for (size_t i = 0; i < n; ++i) data[i] = value(t.index(), i);
          t.allreduce(data.data(), n, op, 10s);
          for (size_t i = 0; i < n; ++i) {
            float want = value(0, i);
            for (int m = 1; m < p; ++m) {
              float v = value(m, i);
              want = op == WireReduce::kSum   ? want + v
                     : op == WireReduce::kMax ? std::max(want, v)
                                              : std::min(want, v);
            }
            ASSERT_EQ(data[i], want) << "n " << n << " i " << i << " op " << wire_reduce_name(op);
          }
        }
    });
}

TEST(GlooTransport, ReduceScatterRing) {
  for (int p = 1; p <= 4; ++p)
    spawn(p, [p](GlooTransport& t) {
      for (size_t n : kSizes)
        for (WireReduce op : {WireReduce::kSum, WireReduce::kMax, WireReduce::kMin}) {
          std::vector<float> in(n * static_cast<size_t>(p)), out(n, -1.f);
          for (size_t i = 0; i < in.size(); ++i) in[i] = value(t.index(), i);
          t.reduce_scatter(in.data(), out.data(), n, op, 10s);
          for (size_t i = 0; i < n; ++i) {
            size_t g = static_cast<size_t>(t.index()) * n + i;
            float want = value(0, g);
            for (int m = 1; m < p; ++m) {
              float v = value(m, g);
              want = op == WireReduce::kSum   ? want + v
                     : op == WireReduce::kMax ? std::max(want, v)
                                              : std::min(want, v);
            }
            ASSERT_EQ(out[i], want) << "p " << p << " n " << n << " i " << i;
          }
        }
    });
}

TEST(GlooTransport, AllgatherAlltoallBroadcastBarrier) {
  for (int p = 1; p <= 4; ++p)
    spawn(p, [p](GlooTransport& t) {
      const size_t up = static_cast<size_t>(p);
      for (size_t bytes : {size_t{0}, size_t{1}, size_t{3}, size_t{4099}}) {
        std::vector<unsigned char> in(bytes), out(bytes * up), inplace(bytes * up);
        for (size_t i = 0; i < bytes; ++i) in[i] = static_cast<unsigned char>(i * 3 + t.index() * 101);
        t.allgather(in.data(), out.data(), bytes, 10s);
        std::copy(in.begin(), in.end(),
                  inplace.begin() + static_cast<long>(bytes * static_cast<size_t>(t.index())));
        t.allgather(inplace.data() + bytes * static_cast<size_t>(t.index()), inplace.data(), bytes, 10s);
        for (int m = 0; m < p; ++m)
          for (size_t i = 0; i < bytes; ++i) {
            auto want = static_cast<unsigned char>(i * 3 + m * 101);
            ASSERT_EQ(out[static_cast<size_t>(m) * bytes + i], want);
            ASSERT_EQ(inplace[static_cast<size_t>(m) * bytes + i], want);
          }

        std::vector<unsigned char> a2a_in(bytes * up), a2a_out(bytes * up);
        for (size_t i = 0; i < a2a_in.size(); ++i) a2a_in[i] = static_cast<unsigned char>(i + t.index() * 37);
        t.alltoall(a2a_in.data(), a2a_out.data(), bytes, 10s);
        for (int m = 0; m < p; ++m)
          for (size_t i = 0; i < bytes; ++i)  // block m of my out = block me of member m's in
            ASSERT_EQ(a2a_out[static_cast<size_t>(m) * bytes + i],
                      static_cast<unsigned char>(static_cast<size_t>(t.index()) * bytes + i + m * 37));

        std::vector<unsigned char> b(bytes);
        for (size_t i = 0; i < bytes; ++i) b[i] = static_cast<unsigned char>(i + t.index());
        t.broadcast(b.data(), bytes, p - 1, 10s);
        for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(b[i], static_cast<unsigned char>(i + p - 1));
        t.barrier(10s);
      }
    });
}

TEST(GlooTransport, Bf16ReducedInF32RoundedOnce) {
  for (int p = 2; p <= 3; ++p)
    spawn(p, [p](GlooTransport& t) {
      const size_t n = 3001;
      // 1 + k/128 is exact in bf16; sums of p of them need more mantissa bits, so rounding shows.
      auto v = [](int m, size_t i) { return 1.0f + static_cast<float>((i * 5 + m * 3) % 128) / 128.0f; };
      std::vector<bf16> data(n);
      for (size_t i = 0; i < n; ++i) data[i] = to_bf16(v(t.index(), i));
      t.allreduce_bf16(data.data(), n, WireReduce::kSum, 10s);
      for (size_t i = 0; i < n; ++i) {
        float exact = 0;
        for (int m = 0; m < p; ++m) exact += v(m, i);
        ASSERT_EQ(data[i].bits, to_bf16(exact).bits) << i;
      }
      std::vector<bf16> in(n * static_cast<size_t>(p)), out(n);
      for (size_t i = 0; i < in.size(); ++i) in[i] = to_bf16(v(t.index(), i));
      t.reduce_scatter_bf16(in.data(), out.data(), n, WireReduce::kSum, 10s);
      for (size_t i = 0; i < n; ++i) {
        float exact = 0;
        for (int m = 0; m < p; ++m) exact += v(m, static_cast<size_t>(t.index()) * n + i);
        ASSERT_EQ(out[i].bits, to_bf16(exact).bits) << i;
      }
    });
}

TEST(GlooTransport, TimeoutNamesOpAndGroup) {
  MemStore store;
  std::string error;
  std::mutex mu;
  std::condition_variable cv;
  bool thrown = false;
  test::TestThread late("member 1 thread", [&] {
    GlooTransport t(store, "to", ranks_of(2), 1);
    // Never joins the allreduce; stays connected until member 0 has given up, so the timeout (not a closed
    // connection) is what member 0 sees.
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, 20s, [&] { return thrown; });
  });
  {
    GlooTransport t(store, "to", ranks_of(2), 0);
    std::vector<float> x(10, 1.f);
    auto t0 = std::chrono::steady_clock::now();
    try {
      t.allreduce(x.data(), x.size(), WireReduce::kSum, 300ms);
    } catch (const Error& e) {
      error = e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
    std::lock_guard<std::mutex> lock(mu);
    thrown = true;
    cv.notify_all();
  }
  late.join();
  EXPECT_NE(error.find("gloo allreduce failed in gloo group [10,11] (me: rank 10)"), std::string::npos)
      << error;
  EXPECT_NE(error.find("Timed out"), std::string::npos) << error;
}

TEST(GlooTransport, PeerThatLeavesIsNamed) {
  // Member 1 connects, then goes away (its transport destroyed, as when its process dies): member 0's next
  // allreduce fails at once, and the error names rank 11 although Gloo's own text only has an address.
  // Member 1 leaves only once member 0's connect has returned too: leaving earlier fails member 0's connect
  // instead (seen under load), which is another test.
  MemStore store;
  std::mutex mu;
  std::condition_variable cv;
  bool zero_connected = false;
  test::TestThread leaver("member 1 thread", [&] {
    GlooTransport t(store, "leave", ranks_of(2), 1);
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, 20s, [&] { return zero_connected; });
  });
  GlooTransport t(store, "leave", ranks_of(2), 0);
  {
    std::lock_guard<std::mutex> lock(mu);
    zero_connected = true;
    cv.notify_all();
  }
  leaver.join();
  std::vector<float> x(10, 1.f);
  std::string error;
  try {
    t.allreduce(x.data(), x.size(), WireReduce::kSum, 5000ms);
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("rank 11 closed the connection"), std::string::npos) << error;
}

TEST(GlooTransport, ReduceScatterTimeoutNamesNeighbour) {
  MemStore store;
  std::string error;
  std::mutex mu;
  std::condition_variable cv;
  bool thrown = false;
  test::TestThread late("member 1 thread", [&] {
    GlooTransport t(store, "rs", ranks_of(2), 1);
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, 20s, [&] { return thrown; });
  });
  {
    GlooTransport t(store, "rs", ranks_of(2), 0);
    std::vector<float> in(8, 1.f), out(4);
    try {
      t.reduce_scatter(in.data(), out.data(), 4, WireReduce::kSum, 300ms);
    } catch (const Error& e) {
      error = e.what();
    }
    std::lock_guard<std::mutex> lock(mu);
    thrown = true;
    cv.notify_all();
  }
  late.join();
  EXPECT_NE(error.find("waiting on rank 11"), std::string::npos) << error;
}

TEST(GlooTransport, MemberThatNeverJoinsFailsConnect) {
  MemStore store;
  GlooTransportOptions opt;
  opt.connect_timeout = 300ms;
  try {
    GlooTransport t(store, "alone", ranks_of(2), 0, opt);
    FAIL() << "connected without a peer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gloo group [10,11]"), std::string::npos) << e.what();
  }
}

TEST(GlooTransport, BadRootAndBadIndex) {
  spawn(1, [](GlooTransport& t) {
    char c = 0;
    EXPECT_THROW(t.broadcast(&c, 1, 1, 1s), Error);
    EXPECT_THROW(t.broadcast(&c, 1, -1, 1s), Error);
  });
  MemStore store;
  EXPECT_THROW(GlooTransport(store, "x", ranks_of(2), 2), Error);
}

TEST(LocalAddressToward, LoopbackAndBadHost) {
  EXPECT_EQ(local_address_toward("127.0.0.1"), "127.0.0.1");
  EXPECT_THROW(local_address_toward("no.such.host.invalid"), Error);
}

}  // namespace
}  // namespace ct::comm

namespace ct::comm {
namespace {

TEST(GlooStoreAdapter, ConnectsThroughOurMemoryStore) {
  auto ours = make_memory_store();
  auto gstore = make_gloo_store(ours, std::chrono::milliseconds(10000));
  std::vector<float> results(3);
  std::vector<test::TestThread> threads;
  for (int i = 0; i < 3; ++i)
    threads.emplace_back(str("member ", i, " thread"), [&, i] {
      GlooTransport t(*gstore, "adapter", {0, 1, 2}, i);
      float x = static_cast<float>(i + 1);
      t.allreduce(&x, 1, WireReduce::kSum, std::chrono::milliseconds(10000));
      results[static_cast<size_t>(i)] = x;
    });
  for (auto& t : threads) t.join();
  for (float r : results) EXPECT_EQ(r, 6.f);
}

}  // namespace
}  // namespace ct::comm

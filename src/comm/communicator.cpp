// The Communicator: bootstrap, the node's shared memory, per-lane transports, worker threads, and the
// composition of the collectives (single process / shm only / transport only / hierarchical).
#include "comm/communicator.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "comm/bootstrap.h"
#include "comm/comm_error.h"
#include "comm/gloo_transport.h"
#include "comm/mpi_transport.h"
#include "comm/shm_node.h"
#include "comm/transport.h"
#include "core/error.h"
#include "core/log.h"

namespace ct::comm {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::avg:
      return "avg";
    case ReduceOp::max:
      return "max";
    case ReduceOp::min:
      return "min";
  }
  return "?";
}

ReduceOp parse_reduce_op(const std::string& name) {
  if (name == "sum") return ReduceOp::sum;
  if (name == "avg") return ReduceOp::avg;
  if (name == "max") return ReduceOp::max;
  if (name == "min") return ReduceOp::min;
  fail("unknown reduce op '", name, "' (expected sum, avg, max or min)");
}

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::ccl:
      return "ccl";
    case Backend::mpi:
      return "mpi";
    case Backend::gloo:
      return "gloo";
  }
  return "?";
}

Backend parse_backend(const std::string& name) {
  if (name == "ccl") return Backend::ccl;
  if (name == "mpi") return Backend::mpi;
  if (name == "gloo") return Backend::gloo;
  fail("unknown communication backend '", name, "' (expected ccl, mpi or gloo)");
}

Timeout default_timeout() {
  const char* v = std::getenv("CORETRAIN_COMM_TIMEOUT");
  if (!v || !*v) return std::chrono::seconds(300);
  char* end = nullptr;
  double s = std::strtod(v, &end);
  CT_CHECK(end != v && *end == 0 && s > 0 && s < 1e7, "CORETRAIN_COMM_TIMEOUT='", v,
           "' is not a positive number of seconds");
  return Timeout(static_cast<int64_t>(s * 1000));
}

namespace {

Combine combine_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::max:
      return Combine::max;
    case ReduceOp::min:
      return Combine::min;
    default:
      return Combine::sum;
  }
}

WireReduce wire_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::max:
      return WireReduce::kMax;
    case ReduceOp::min:
      return WireReduce::kMin;
    default:
      return WireReduce::kSum;
  }
}

void scale(void* p, int64_t n, DType dt, float divisor) {
  if (n <= 0) return;
  if (dt == DType::f32) {
    auto* f = static_cast<float*>(p);
    reduce_f32(&f, 1, &f, 1, n, Combine::sum, divisor);
  } else {
    auto* b = static_cast<bf16*>(p);
    reduce_bf16(&b, 1, &b, 1, n, Combine::sum, divisor);
  }
}

// memcpy that accepts empty ranges with null pointers (a zero-count collective may pass them).
void copy_n(void* dst, const void* src, size_t n) {
  if (n > 0) std::memcpy(dst, src, n);
}

class WorkImpl final : public Work {
 public:
  void wait() override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done_; });
    if (error_) std::rethrow_exception(error_);
  }
  bool test() override {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }
  void finish(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    error_ = e;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

class DoneWork final : public Work {
 public:
  void wait() override {}
  bool test() override { return true; }
};

// One lane = one worker thread, one shm channel, one transport: ops on a lane run strictly in issue order.
struct Lane {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<std::function<void()>, std::shared_ptr<WorkImpl>>> queue;
  bool busy = false;
  bool stop = false;
  std::thread thread;
  ShmChannel* shm = nullptr;
  std::unique_ptr<Transport> transport;
};

class CommImpl final : public Communicator {
 public:
  CommImpl(std::shared_ptr<Bootstrap> boot, const CommOptions& opts);
  ~CommImpl() override;

  int rank() const override { return info().rank; }
  int size() const override { return info().size; }
  int local_rank() const override { return info().local_rank; }
  int local_size() const override { return info().local_size; }
  int node() const override { return info().node; }
  int num_nodes() const override { return info().num_nodes; }
  Backend backend() const override { return backend_; }
  std::string describe() const override;

  void allreduce(void* buf, int64_t count, DType dtype, const AllreduceOptions& o) override {
    submit(false, [=, this](Lane& l) { do_allreduce(l, buf, count, dtype, o.op, tmo(o.timeout)); });
  }
  void reduce_scatter(const void* send, void* recv, int64_t rc, DType dtype,
                      const ReduceScatterOptions& o) override {
    submit(false, [=, this](Lane& l) { do_reduce_scatter(l, send, recv, rc, dtype, o.op, tmo(o.timeout)); });
  }
  void allgather(const void* send, void* recv, int64_t count, DType dtype,
                 const AllgatherOptions& o) override {
    submit(false, [=, this](Lane& l) { do_allgather(l, send, recv, count, dtype, tmo(o.timeout)); });
  }
  void alltoall(const void* send, void* recv, int64_t count, DType dtype, const AlltoallOptions& o) override {
    submit(false, [=, this](Lane& l) { do_alltoall(l, send, recv, count, dtype, tmo(o.timeout)); });
  }
  void broadcast(void* buf, int64_t count, DType dtype, const BroadcastOptions& o) override {
    check_root(o.root);
    submit(false, [=, this](Lane& l) { do_broadcast(l, buf, count, dtype, o.root, tmo(o.timeout)); });
  }
  void barrier(const BarrierOptions& o) override {
    submit(false, [=, this](Lane& l) { do_barrier(l, tmo(o.timeout)); });
  }
  WorkPtr allreduce_async(void* buf, int64_t count, DType dtype, const AllreduceOptions& o) override {
    return submit(true, [=, this](Lane& l) { do_allreduce(l, buf, count, dtype, o.op, tmo(o.timeout)); });
  }
  WorkPtr reduce_scatter_async(const void* send, void* recv, int64_t rc, DType dtype,
                               const ReduceScatterOptions& o) override {
    return submit(true,
                  [=, this](Lane& l) { do_reduce_scatter(l, send, recv, rc, dtype, o.op, tmo(o.timeout)); });
  }
  WorkPtr allgather_async(const void* send, void* recv, int64_t count, DType dtype,
                          const AllgatherOptions& o) override {
    return submit(true, [=, this](Lane& l) { do_allgather(l, send, recv, count, dtype, tmo(o.timeout)); });
  }
  WorkPtr alltoall_async(const void* send, void* recv, int64_t count, DType dtype,
                         const AlltoallOptions& o) override {
    return submit(true, [=, this](Lane& l) { do_alltoall(l, send, recv, count, dtype, tmo(o.timeout)); });
  }
  WorkPtr broadcast_async(void* buf, int64_t count, DType dtype, const BroadcastOptions& o) override {
    check_root(o.root);
    return submit(true, [=, this](Lane& l) { do_broadcast(l, buf, count, dtype, o.root, tmo(o.timeout)); });
  }
  WorkPtr barrier_async(const BarrierOptions& o) override {
    return submit(true, [=, this](Lane& l) { do_barrier(l, tmo(o.timeout)); });
  }
  void* shm_alloc(int64_t bytes) override;
  void* shm_alloc_node(int64_t bytes) override;

 private:
  const LaunchInfo& info() const { return boot_->info(); }
  // shm_alloc and shm_alloc_node with shared memory: the node collective, queued on lane 0.
  void* shm_alloc_in_order(int64_t bytes, bool node_shared);
  Timeout tmo(Timeout t) const { return t.count() > 0 ? t : timeout_; }
  bool hierarchical() const { return backend_ == Backend::ccl; }
  void check_root(int root) const {
    CT_CHECK(root >= 0 && root < size(), "broadcast: root ", root, " outside 0..", size() - 1);
  }
  // Blocking ops with nothing queued ahead run inline, without wrapping fn in a std::function (no heap
  // allocation on the small-message path); everything else is queued for the lane's worker.
  template <class F>
  WorkPtr submit(bool async, F&& fn);
  WorkPtr enqueue(Lane& lane, std::unique_lock<std::mutex>& lock, bool async, std::function<void(Lane&)> fn);
  void worker_loop(Lane& lane, int index);
  template <class F>
  void run(Lane& lane, F& fn);

  void do_allreduce(Lane& l, void* buf, int64_t count, DType dt, ReduceOp op, Timeout t);
  void do_reduce_scatter(Lane& l, const void* send, void* recv, int64_t rc, DType dt, ReduceOp op, Timeout t);
  void do_allgather(Lane& l, const void* send, void* recv, int64_t count, DType dt, Timeout t);
  void do_alltoall(Lane& l, const void* send, void* recv, int64_t count, DType dt, Timeout t);
  void do_broadcast(Lane& l, void* buf, int64_t count, DType dt, int root, Timeout t);
  void do_barrier(Lane& l, Timeout t);
  void transport_allreduce(Transport& tr, void* buf, int64_t count, DType dt, ReduceOp op, Timeout t);

  std::shared_ptr<Bootstrap> boot_;
  Backend backend_;
  Timeout timeout_;
  std::unique_ptr<ShmNode> shm_;
  std::unique_ptr<gloo::rendezvous::Store> gloo_store_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<int> affinity_;
  std::atomic<uint64_t> issued_{0};  // ops must still be issued from one thread at a time to keep rank order
  std::vector<std::shared_ptr<void>> private_allocs_;
};

CommImpl::CommImpl(std::shared_ptr<Bootstrap> boot, const CommOptions& opts)
    : boot_(std::move(boot)),
      backend_(opts.backend),
      timeout_(opts.timeout.count() > 0 ? opts.timeout : default_timeout()) {
  const LaunchInfo& in = info();
  const int id = boot_->next_comm_id();
  int workers = opts.workers;
  if (workers < 0) {
    const char* v = std::getenv("CCL_WORKER_COUNT");
    workers = 1;
    if (v && *v) {
      char* end = nullptr;
      long w = std::strtol(v, &end, 10);
      CT_CHECK(end != v && *end == 0 && w >= 1 && w <= 64, "CCL_WORKER_COUNT='", v,
               "' is not an integer in 1..64");
      workers = static_cast<int>(w);
    }
  }
  CT_CHECK(workers >= 1 && workers <= 64, "comm: worker count ", workers, " out of range 1..64");
  if (const char* a = std::getenv("CCL_WORKER_AFFINITY"); a && *a && std::strcmp(a, "auto") != 0) {
    auto cores = parse_core_list(a);
    if (static_cast<int>(cores.size()) >= workers * in.local_size)
      affinity_.assign(cores.begin() + workers * in.local_rank,
                       cores.begin() + workers * (in.local_rank + 1));
    else if (static_cast<int>(cores.size()) >= workers)
      affinity_.assign(cores.begin(), cores.begin() + workers);
    else
      fail("CCL_WORKER_AFFINITY='", a, "' names ", cores.size(), " cores; need ", workers, " per rank (",
           workers * in.local_size, " for the node)");
  }
  for (int w = 0; w < workers; ++w) lanes_.push_back(std::make_unique<Lane>());

  if (in.size > 1) {
    if (backend_ == Backend::ccl) {
      if (in.num_nodes > 1)
        CT_CHECK(in.size == in.num_nodes * in.local_size,
                 "comm: backend ccl needs the same number of ranks on every ", "node (", in.size,
                 " ranks on ", in.num_nodes, " nodes); use backend mpi or gloo");
      if (in.local_size > 1) {
        ShmNodeConfig c;
        c.local_rank = in.local_rank;
        c.local_size = in.local_size;
        c.first_rank = in.rank - in.local_rank;
        c.node = in.node;
        c.channels = workers;
        c.timeout = timeout_;
        if (const char* kb = std::getenv("CORETRAIN_SHM_STAGE_KB"); kb && *kb)
          c.stage_bytes = static_cast<size_t>(std::strtoul(kb, nullptr, 10)) << 10;
        char nonce[17];
        std::snprintf(nonce, sizeof(nonce), "%016llx", static_cast<unsigned long long>(boot_->nonce()));
        c.name = str("/ct-", shm_name_part(boot_->job_tag()), "-", nonce, "-c", id, "-n", in.node);
        shm_ = std::make_unique<ShmNode>(c);
        for (int w = 0; w < workers; ++w) lanes_[w]->shm = &shm_->channel(w);
      }
    } else if (backend_ == Backend::mpi) {
      CT_CHECK(boot_->mpi(), "comm: backend mpi needs a launch by mpirun/mpiexec (this is a ",
               launcher_name(in.launcher), " launch)");
    } else {
      CT_CHECK(boot_->store(),
               "comm: backend gloo needs an env-var launch with MASTER_ADDR/MASTER_PORT (this is a ",
               launcher_name(in.launcher), " launch)");
    }
    bool need_transport = backend_ != Backend::ccl || in.num_nodes > 1;
    if (need_transport) {
      // The group: everyone (plain backends) or my local-rank peer on every node (hierarchical).
      std::vector<int> ranks;
      int index = 0;
      if (backend_ == Backend::ccl) {
        for (int n = 0; n < in.num_nodes; ++n) ranks.push_back(n * in.local_size + in.local_rank);
        index = in.node;
      } else {
        for (int r = 0; r < in.size; ++r) ranks.push_back(r);
        index = in.rank;
      }
      for (int w = 0; w < workers; ++w) {
        if (boot_->mpi()) {
          int color = backend_ == Backend::ccl ? in.local_rank : 0;
          lanes_[w]->transport = MpiTransport::split(MPI_COMM_WORLD, color, index);
        } else {
          if (!gloo_store_) gloo_store_ = make_gloo_store(boot_->store(), timeout_);
          GlooTransportOptions go;
          go.hostname =
              in.master_addr.empty() ? std::string("127.0.0.1") : local_address_toward(in.master_addr);
          go.connect_timeout = timeout_;
          std::string prefix = backend_ == Backend::ccl
                                   ? str("xport/c", id, "/lane", w, "/local", in.local_rank)
                                   : str("xport/c", id, "/lane", w, "/world");
          lanes_[w]->transport = std::make_unique<GlooTransport>(*gloo_store_, prefix, ranks, index, go);
        }
      }
    }
  }
  for (int w = 0; w < workers; ++w)
    lanes_[w]->thread = std::thread([this, w] { worker_loop(*lanes_[w], w); });
  log::debug("comm: ", describe());
}

CommImpl::~CommImpl() {
  if (std::uncaught_exceptions() > 0) mark_comm_failed();
  for (auto& l : lanes_) {
    {
      std::lock_guard<std::mutex> lock(l->mu);
      l->stop = true;
    }
    l->cv.notify_all();
  }
  for (auto& l : lanes_)
    if (l->thread.joinable()) l->thread.join();
}

std::string CommImpl::describe() const {
  const LaunchInfo& in = info();
  std::string parts;
  if (shm_) parts += "shm";
  if (!lanes_.empty() && lanes_[0]->transport)
    parts += str(parts.empty() ? "" : " + ", lanes_[0]->transport->kind());
  if (parts.empty()) parts = "local";
  return str(backend_name(backend_), ": ", in.size, " rank(s) on ", in.num_nodes, " node(s) (", parts, "), ",
             lanes_.size(), " worker(s), launched by ", launcher_name(in.launcher));
}

template <class F>
void CommImpl::run(Lane& lane, F& fn) {
  try {
    fn(lane);
  } catch (...) {
    mark_comm_failed();
    throw;
  }
}

template <class F>
WorkPtr CommImpl::submit(bool async, F&& fn) {
  Lane& lane = *lanes_[issued_++ % lanes_.size()];
  std::unique_lock<std::mutex> lock(lane.mu);
  if (!async && lane.queue.empty() && !lane.busy) {
    // Nothing queued ahead on this lane: run on the caller's thread (no hand-off latency for small ops).
    lane.busy = true;
    lock.unlock();
    struct Release {
      Lane& l;
      ~Release() {
        std::lock_guard<std::mutex> g(l.mu);
        l.busy = false;
        // Wake the worker only when it has queued work: a wake-up per op made the idle worker thread
        // preempt the peer rank on a busy machine, which then arrived late and cost a scheduler slice.
        if (!l.queue.empty()) l.cv.notify_all();
      }
    } release{lane};
    run(lane, fn);
    return nullptr;
  }
  return enqueue(lane, lock, async, std::function<void(Lane&)>(std::forward<F>(fn)));
}

WorkPtr CommImpl::enqueue(Lane& lane, std::unique_lock<std::mutex>& lock, bool async,
                          std::function<void(Lane&)> fn) {
  auto work = std::make_shared<WorkImpl>();
  lane.queue.emplace_back([this, &lane, fn = std::move(fn)]() mutable { run(lane, fn); }, work);
  lane.cv.notify_all();
  lock.unlock();
  if (!async) {
    work->wait();
    return nullptr;
  }
  return work;
}

void CommImpl::worker_loop(Lane& lane, int index) {
  if (!affinity_.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(affinity_[index], &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
      log::warn("comm: cannot pin worker ", index, " to core ", affinity_[index], " (CCL_WORKER_AFFINITY)");
  }
  std::unique_lock<std::mutex> lock(lane.mu);
  for (;;) {
    lane.cv.wait(lock, [&] { return lane.stop || (!lane.queue.empty() && !lane.busy); });
    if (lane.queue.empty()) return;  // stop requested and drained
    auto [fn, work] = std::move(lane.queue.front());
    lane.queue.pop_front();
    lane.busy = true;
    lock.unlock();
    std::exception_ptr err;
    try {
      fn();
    } catch (...) {
      err = std::current_exception();
    }
    work->finish(err);
    lock.lock();
    lane.busy = false;
    lane.cv.notify_all();
  }
}

void* CommImpl::shm_alloc(int64_t bytes) {
  CT_CHECK(bytes >= 0, "shm_alloc: negative size ", bytes);
  if (!shm_) {
    auto p = aligned_alloc_shared(std::max<int64_t>(bytes, 1));
    private_allocs_.push_back(p);
    return p.get();
  }
  return shm_alloc_in_order(bytes, /*node_shared=*/false);
}

void* CommImpl::shm_alloc_node(int64_t bytes) {
  CT_CHECK(bytes >= 0, "shm_alloc_node: negative size ", bytes);
  return shm_ ? shm_alloc_in_order(bytes, /*node_shared=*/true) : nullptr;
}

void* CommImpl::shm_alloc_in_order(int64_t bytes, bool node_shared) {
  // Always lane 0, in issue order with the other ops there.
  void* out = nullptr;
  Lane& lane = *lanes_[0];
  std::unique_lock<std::mutex> lock(lane.mu);
  auto work = std::make_shared<WorkImpl>();
  lane.queue.emplace_back([&, bytes, node_shared] { out = lane.shm->alloc(bytes, timeout_, node_shared); },
                          work);
  lane.cv.notify_all();
  lock.unlock();
  work->wait();
  return out;
}

// ---------------------------------------------------------------------------------------------- collectives

// Transport ops on zero bytes are skipped: every member of the group computes the same size, so all skip.
// bf16 crosses as f32 in bounded chunks and is divided (avg) before its single rounding.
void CommImpl::transport_allreduce(Transport& tr, void* buf, int64_t count, DType dt, ReduceOp op,
                                   Timeout t) {
  if (count == 0) return;
  const float divisor = op == ReduceOp::avg ? static_cast<float>(size()) : 0.f;
  if (dt == DType::f32) {
    tr.allreduce(static_cast<float*>(buf), static_cast<size_t>(count), wire_of(op), t);
    if (divisor != 0.f) scale(buf, count, dt, divisor);
    return;
  }
  constexpr int64_t kChunk = int64_t{1} << 20;
  std::vector<float> wide(static_cast<size_t>(std::min(count, kChunk)));
  auto* b = static_cast<bf16*>(buf);
  for (int64_t off = 0; off < count; off += kChunk) {
    const int64_t n = std::min(kChunk, count - off);
    bf16_to_f32(b + off, wide.data(), n);
    tr.allreduce(wide.data(), static_cast<size_t>(n), wire_of(op), t);
    float* w = wide.data();
    reduce_f32(&w, 1, &w, 1, n, Combine::sum, divisor);
    f32_to_bf16(w, b + off, n);
  }
}

void CommImpl::do_allreduce(Lane& l, void* buf, int64_t count, DType dt, ReduceOp op, Timeout t) {
  CT_CHECK(count >= 0, "allreduce: negative count ", count);
  const float divisor = op == ReduceOp::avg ? static_cast<float>(size()) : 0.f;
  if (size() == 1) return;
  if (!l.transport) return l.shm->allreduce(buf, count, dt, combine_of(op), divisor, t);
  if (!l.shm) return transport_allreduce(*l.transport, buf, count, dt, op, t);
  // Hierarchical: node reduce-scatter in shm, my slice across nodes, node allgather in shm.
  l.shm->reduce_scatter_inplace(buf, count, dt, combine_of(op), t);
  int64_t lo, len;
  ShmNode::slice(count, local_size(), local_rank(), lo, len);
  auto* slice = static_cast<uint8_t*>(buf) + lo * dtype_size(dt);
  transport_allreduce(*l.transport, slice, len, dt, op, t);
  l.shm->allgather_inplace(buf, count, dt, t);
}

void CommImpl::do_reduce_scatter(Lane& l, const void* send, void* recv, int64_t rc, DType dt, ReduceOp op,
                                 Timeout t) {
  CT_CHECK(rc >= 0, "reduce_scatter: negative count ", rc);
  const float divisor = op == ReduceOp::avg ? static_cast<float>(size()) : 0.f;
  const int64_t esz = dtype_size(dt);
  if (size() == 1) {
    if (send != recv) copy_n(recv, send, rc * esz);
    return;
  }
  if (!l.transport) return l.shm->reduce_scatter(send, recv, rc, dt, combine_of(op), divisor, t);
  if (!l.shm) {
    if (rc == 0) return;
    if (dt == DType::f32)
      l.transport->reduce_scatter(static_cast<const float*>(send), static_cast<float*>(recv), rc, wire_of(op),
                                  t);
    else
      l.transport->reduce_scatter_bf16(static_cast<const bf16*>(send), static_cast<bf16*>(recv), rc,
                                       wire_of(op), t);
    if (divisor != 0.f) scale(recv, rc, dt, divisor);
    return;
  }
  // Hierarchical: allreduce a copy, keep my block (correct, not bandwidth-optimal).
  std::vector<uint8_t> tmp(static_cast<size_t>(rc * size() * esz));
  copy_n(tmp.data(), send, tmp.size());
  do_allreduce(l, tmp.data(), rc * size(), dt, op, t);
  copy_n(recv, tmp.data() + rank() * rc * esz, rc * esz);
}

void CommImpl::do_allgather(Lane& l, const void* send, void* recv, int64_t count, DType dt, Timeout t) {
  CT_CHECK(count >= 0, "allgather: negative count ", count);
  const int64_t esz = dtype_size(dt);
  if (size() == 1) {
    if (send != recv) copy_n(recv, send, count * esz);
    return;
  }
  if (!l.transport) return l.shm->allgather(send, recv, count, dt, t);
  if (count == 0) return;
  if (!l.shm) return l.transport->allgather(send, recv, count * esz, t);
  // Hierarchical: my column across nodes, then the node's columns through shm, then transpose into place.
  const int nodes = num_nodes(), L = local_size();
  std::vector<uint8_t> column(static_cast<size_t>(nodes * count * esz));
  l.transport->allgather(send, column.data(), count * esz, t);
  std::vector<uint8_t> all(static_cast<size_t>(L) * column.size());
  l.shm->allgather(column.data(), all.data(), nodes * count, dt, t);
  auto* out = static_cast<uint8_t*>(recv);
  for (int lr = 0; lr < L; ++lr)
    for (int n = 0; n < nodes; ++n)
      copy_n(out + (n * L + lr) * count * esz, all.data() + (lr * nodes + n) * count * esz, count * esz);
}

void CommImpl::do_alltoall(Lane& l, const void* send, void* recv, int64_t count, DType dt, Timeout t) {
  CT_CHECK(count >= 0, "alltoall: negative count ", count);
  const int64_t esz = dtype_size(dt);
  if (size() == 1) {
    if (send != recv) copy_n(recv, send, count * esz);
    return;
  }
  if (!l.transport) return l.shm->alltoall(send, recv, count, dt, t);
  if (count == 0) return;
  if (!l.shm) return l.transport->alltoall(send, recv, count * esz, t);
  // Hierarchical: gather the node's send buffers, then each local-rank group exchanges, per destination node,
  // the blocks its members need; what arrives from node m is already laid out as recv's blocks m*L ..
  // m*L+L-1.
  const int nodes = num_nodes(), L = local_size(), lr = local_rank();
  const int64_t row = size() * count * esz;
  std::vector<uint8_t> node_all(static_cast<size_t>(L * row));
  l.shm->allgather(send, node_all.data(), size() * count, dt, t);
  std::vector<uint8_t> out(static_cast<size_t>(row));
  for (int m = 0; m < nodes; ++m)
    for (int sl = 0; sl < L; ++sl)
      copy_n(out.data() + (m * L + sl) * count * esz, node_all.data() + sl * row + (m * L + lr) * count * esz,
             count * esz);
  l.transport->alltoall(out.data(), recv, L * count * esz, t);
}

void CommImpl::do_broadcast(Lane& l, void* buf, int64_t count, DType dt, int root, Timeout t) {
  CT_CHECK(count >= 0, "broadcast: negative count ", count);
  if (size() == 1) return;
  if (!l.transport) return l.shm->broadcast(buf, count, dt, root, t);
  if (count == 0) return;
  if (!l.shm) return l.transport->broadcast(buf, count * dtype_size(dt), root, t);
  const int L = local_size();
  if (local_rank() == root % L) l.transport->broadcast(buf, count * dtype_size(dt), root / L, t);
  l.shm->broadcast(buf, count, dt, root % L, t);
}

void CommImpl::do_barrier(Lane& l, Timeout t) {
  if (size() == 1) return;
  if (l.shm) l.shm->barrier(t);
  if (l.transport) {
    l.transport->barrier(t);
    if (l.shm) l.shm->barrier(t);
  }
}

}  // namespace

std::vector<int> parse_core_list(const std::string& s) {
  std::vector<int> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    std::string tok = s.substr(i, j == std::string::npos ? std::string::npos : j - i);
    size_t dash = tok.find('-');
    try {
      if (dash == std::string::npos) {
        out.push_back(std::stoi(tok));
      } else {
        int a = std::stoi(tok.substr(0, dash)), b = std::stoi(tok.substr(dash + 1));
        CT_CHECK(a <= b, "CCL_WORKER_AFFINITY: range '", tok, "' is reversed");
        for (int c = a; c <= b; ++c) out.push_back(c);
      }
    } catch (const std::logic_error&) {
      fail("CCL_WORKER_AFFINITY='", s, "': '", tok, "' is not a core number or range");
    }
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return out;
}

std::unique_ptr<Communicator> make_communicator(const CommOptions& opts) {
  Timeout t = opts.timeout.count() > 0 ? opts.timeout : default_timeout();
  return std::make_unique<CommImpl>(Bootstrap::from_env(t), opts);
}

std::unique_ptr<Communicator> make_communicator(std::shared_ptr<Bootstrap> boot, const CommOptions& opts) {
  return std::make_unique<CommImpl>(std::move(boot), opts);
}

}  // namespace ct::comm

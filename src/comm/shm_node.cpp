// Shared-memory node collectives: segment layout, arrival protocol, waits with diagnostics, and the
// algorithms (small: everyone reduces a shared copy; large: chunked reduce-scatter + allgather through
// double-buffered staging, each rank reducing its slice; zero-copy when the buffer lives in a shared
// allocation).
#include "comm/shm_node.h"

#include <immintrin.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "comm/comm_error.h"
#include "core/error.h"
#include "core/log.h"

namespace ct::comm {
namespace {

using Clock = std::chrono::steady_clock;

enum Kind : uint8_t {
  kAllreduce = 1,
  kReduceScatter,
  kAllgather,
  kAlltoall,
  kBroadcast,
  kBarrier,
  kAlloc,
  kReduceScatterInplace,
  kAllgatherInplace
};

const char* kind_name(uint8_t k) {
  static const char* names[] = {"?",
                                "allreduce",
                                "reduce_scatter",
                                "allgather",
                                "alltoall",
                                "broadcast",
                                "barrier",
                                "shm_alloc",
                                "reduce_scatter(hierarchical)",
                                "allgather(hierarchical)"};
  return k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

const char* combine_name(uint8_t c) {
  switch (static_cast<Combine>(c)) {
    case Combine::sum:
      return "sum";
    case Combine::max:
      return "max";
    case Combine::min:
      return "min";
  }
  return "?";
}

constexpr int64_t kSmallBytes = 32 << 10;
constexpr int kSpin = 2000;
constexpr int kYield = 200;

struct NodeHeader {
  // Written by local rank 0 after the segment is already visible: peers wait for local_size (stored last,
  // with release) before reading the rest.
  std::atomic<uint32_t> local_size;
  uint32_t channels;
  uint64_t stage_bytes;
  std::atomic<int32_t> attached;
};

struct alignas(64) RankInfo {
  std::atomic<int32_t> pid;
  int32_t rank;
};

size_t round_up(size_t x, size_t a) {
  return (x + a - 1) / a * a;
}

void reduce_any(DType dt, const uint8_t* const* in, int n_in, uint8_t* const* out, int n_out, int64_t count,
                Combine op, float divisor) {
  if (count <= 0) return;
  if (dt == DType::f32)
    reduce_f32(reinterpret_cast<const float* const*>(in), n_in, reinterpret_cast<float* const*>(out), n_out,
               count, op, divisor);
  else
    reduce_bf16(reinterpret_cast<const bf16* const*>(in), n_in, reinterpret_cast<bf16* const*>(out), n_out,
                count, op, divisor);
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

struct ShmChannel::Desc {
  uint64_t seq;
  uint8_t kind, dtype, op, zc;
  int32_t root;
  int64_t count;
  int64_t where;  // zero-copy: allocation index << 40 | offset in the rank's region; else -1
};

struct alignas(64) ShmChannel::Slot {
  std::atomic<uint64_t> counter;   // peers poll it; only sleeper bookkeeping shares its cache line
  std::atomic<uint32_t> bell;      // futex word: changes on every arrival (and on failure) to wake sleepers
  std::atomic<uint32_t> sleepers;  // peers blocked in futex_wait on bell
  char pad0[48];
  std::atomic<uint64_t> seq_posted;
  std::atomic<uint32_t> failed;
  char pad1[52];
  Desc desc[4];  // ring by sequence number: a peer runs at most one op ahead
  char reason[256];
};

// ------------------------------------------------------------------------------------------------ ShmNode

void ShmNode::slice(int64_t count, int parts, int i, int64_t& lo, int64_t& len) {
  int64_t base = count / parts, extra = count % parts;
  lo = i * base + std::min<int64_t>(i, extra);
  len = base + (i < extra ? 1 : 0);
}

ShmNode::ShmNode(const ShmNodeConfig& config) : config_(config) {
  const int n = config_.local_size, me = config_.local_rank;
  CT_CHECK(n >= 1 && me >= 0 && me < n, "shm: local rank ", me, " of ", n, " is invalid");
  CT_CHECK(config_.channels >= 1 && config_.channels <= 64, "shm: ", config_.channels,
           " channels (CCL_WORKER_COUNT) out of range 1..64");
  if (config_.stage_bytes == 0)
    config_.stage_bytes = std::max<size_t>((size_t{8} << 20) / n, size_t{256} << 10);
  config_.stage_bytes = round_up(std::max<size_t>(config_.stage_bytes, size_t{64} * n * 64), 4096);
  slots_offset_ = round_up(64 + sizeof(RankInfo) * n, 4096);
  stage_offset_ = round_up(slots_offset_ + sizeof(ShmChannel::Slot) * n * config_.channels, 4096);
  size_t total = stage_offset_ + config_.stage_bytes * 2 * n * config_.channels;

  auto start = Clock::now();
  if (me == 0) {
    remove_leftover_segments();
    control_ = ShmSegment::create(config_.name, total);
    auto* h = reinterpret_cast<NodeHeader*>(control_.data());
    h->channels = config_.channels;
    h->stage_bytes = config_.stage_bytes;
    h->local_size.store(static_cast<uint32_t>(n), std::memory_order_release);
  } else {
    auto nap = std::chrono::milliseconds(1);
    while (!ShmSegment::try_open(config_.name, control_)) {
      if (Clock::now() - start > config_.timeout) {
        mark_comm_failed();
        fail("shm: timed out after ", seconds_since(start), " s waiting for local rank 0 (rank ",
             config_.first_rank, ") of node ", config_.node, " to create /dev/shm", config_.name);
      }
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::milliseconds(50));
    }
    auto* h = reinterpret_cast<NodeHeader*>(control_.data());
    // The segment appears before rank 0 has filled in its header: wait for it (bounded like the open).
    while (h->local_size.load(std::memory_order_acquire) == 0) {
      if (Clock::now() - start > config_.timeout) {
        mark_comm_failed();
        fail("shm: timed out after ", seconds_since(start), " s waiting for local rank 0 (rank ",
             config_.first_rank, ") of node ", config_.node, " to initialize /dev/shm", config_.name);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    CT_CHECK(control_.payload_bytes() == total && h->local_size.load() == static_cast<uint32_t>(n) &&
                 h->channels == static_cast<uint32_t>(config_.channels) &&
                 h->stage_bytes == config_.stage_bytes,
             "shm: node ", config_.node, " segment layout differs between ranks (local size ",
             h->local_size.load(), " vs ", n, ", channels ", h->channels, " vs ", config_.channels,
             "): CCL_WORKER_COUNT must match on every rank");
  }
  auto* info = reinterpret_cast<RankInfo*>(control_.data() + 64);
  info[me].rank = config_.first_rank + me;
  info[me].pid.store(::getpid(), std::memory_order_release);
  auto* h = reinterpret_cast<NodeHeader*>(control_.data());
  h->attached.fetch_add(1, std::memory_order_acq_rel);
  for (auto nap = std::chrono::microseconds(50); h->attached.load(std::memory_order_acquire) < n;) {
    if (Clock::now() - start > config_.timeout) {
      std::string missing;
      for (int r = 0; r < n; ++r)
        if (info[r].pid.load() == 0) missing += str(missing.empty() ? "" : ",", config_.first_rank + r);
      mark_comm_failed();
      fail("shm: timed out after ", seconds_since(start), " s waiting for rank(s) ", missing,
           " to attach to node ", config_.node, "'s segment /dev/shm", config_.name);
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(20000));
  }
  // Everyone has it mapped: the name can go, so a crash from here on leaves nothing behind.
  if (me == 0) control_.unlink();
  for (int c = 0; c < config_.channels; ++c) channels_.push_back(std::make_unique<ShmChannel>(*this, c));
}

ShmNode::~ShmNode() = default;

int ShmNode::peer_pid(int r) const {
  return reinterpret_cast<const RankInfo*>(control_.data() + 64)[r].pid.load(std::memory_order_acquire);
}

// ------------------------------------------------------------------------------------------------ ShmChannel

ShmChannel::ShmChannel(ShmNode& node, int index)
    : node_(node),
      index_(index),
      me_(node.config_.local_rank),
      n_(node.config_.local_size),
      small_ins_(static_cast<size_t>(n_)) {}

ShmChannel::Slot& ShmChannel::slot(int r) const {
  auto* base = reinterpret_cast<Slot*>(node_.control_.data() + node_.slots_offset_);
  return base[static_cast<size_t>(index_) * n_ + r];
}

uint8_t* ShmChannel::stage(int r, int b) const {
  size_t sb = node_.config_.stage_bytes;
  return node_.control_.data() + node_.stage_offset_ + ((static_cast<size_t>(index_) * n_ + r) * 2 + b) * sb;
}

int64_t ShmChannel::piece_elems(DType dtype) const {
  int64_t p = static_cast<int64_t>(node_.config_.stage_bytes) / (n_ * dtype_size(dtype));
  return std::max<int64_t>(32, p / 32 * 32);
}

int ShmChannel::pick_buffer() {
  int b = next_buffer_;
  next_buffer_ ^= 1;
  return b;
}

uint8_t* ShmChannel::peer_ptr(const void* p, int j) const {
  std::lock_guard<std::mutex> lock(node_.alloc_mu_);
  auto* q = static_cast<const uint8_t*>(p);
  for (auto& a : node_.allocs_) {
    uint8_t* mine = a.seg.data() + me_ * a.stride;
    if (q >= mine && q < mine + a.stride) return a.seg.data() + j * a.stride + (q - mine);
  }
  return nullptr;
}

std::string ShmChannel::op_name() const {
  return str("shm ", kind_name(kind_), " #", seq_, " on node ", node_.config_.node);
}

void ShmChannel::fail_op(const std::string& what) {
  std::string msg = str(op_name(), ": ", what);
  if (!broken_) {
    broken_ = true;
    broken_reason_ = msg;
    Slot& s = slot(me_);
    std::strncpy(s.reason, msg.c_str(), sizeof(s.reason) - 1);
    s.failed.store(1, std::memory_order_release);
    ring(s);
  }
  mark_comm_failed();
  throw Error(msg);
}

void ShmChannel::begin(uint8_t kind, int64_t count, DType dtype, uint8_t op, int32_t root, const void* buf,
                       ShmTimeout timeout) {
  if (broken_) throw Error(str("shm communicator unusable after an earlier error: ", broken_reason_));
  kind_ = kind;
  start_ = Clock::now();
  timeout_ = timeout.count() > 0 ? timeout : node_.config_.timeout;
  ++seq_;
  int64_t where = -1;
  zero_copy_ = false;
  if (buf) {
    std::lock_guard<std::mutex> lock(node_.alloc_mu_);
    auto* q = static_cast<const uint8_t*>(buf);
    for (size_t i = 0; i < node_.allocs_.size(); ++i) {
      auto& a = node_.allocs_[i];
      uint8_t* mine = a.seg.data() + me_ * a.stride;
      if (q >= mine && q < mine + a.stride) {
        int64_t off = q - mine;
        if (off + count * dtype_size(dtype) > static_cast<int64_t>(a.bytes))
          fail_op(str("buffer of ", count * dtype_size(dtype), " bytes at offset ", off,
                      " runs past the end of its shm_alloc region (", a.bytes, " bytes)"));
        where = (static_cast<int64_t>(i) << 40) | off;
        zero_copy_ = true;
      }
    }
  }
  Slot& s = slot(me_);
  Desc& d = s.desc[seq_ % 4];
  d.seq = seq_;
  d.kind = kind;
  d.dtype = static_cast<uint8_t>(dtype);
  d.op = op;
  d.zc = zero_copy_;
  d.root = root;
  d.count = count;
  d.where = where;
  s.seq_posted.store(seq_, std::memory_order_release);
}

void ShmChannel::arrive() {
  Slot& s = slot(me_);
  s.counter.store(++counter_, std::memory_order_release);
  ring(s);
}

// Wakes peers sleeping on s.bell. seq_cst on bell/sleepers pairs with the sleeper's increment-then-read (a
// Dekker handshake): either we see the sleeper and wake it, or it sees the new bell and does not sleep.
void ShmChannel::ring(Slot& s) {
  s.bell.fetch_add(1, std::memory_order_seq_cst);
  if (s.sleepers.load(std::memory_order_seq_cst) > 0)
    ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&s.bell), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

// Blocks until peer's bell changes from what it was on entry, or `cap` passes.
void ShmChannel::sleep_on(Slot& peer, uint64_t target, std::chrono::microseconds cap) {
  peer.sleepers.fetch_add(1, std::memory_order_seq_cst);
  uint32_t bell = peer.bell.load(std::memory_order_seq_cst);
  if (peer.counter.load(std::memory_order_acquire) < target && !peer.failed.load(std::memory_order_acquire)) {
    timespec ts{static_cast<time_t>(cap.count() / 1000000), static_cast<long>(cap.count() % 1000000) * 1000};
    ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&peer.bell), FUTEX_WAIT, bell, &ts, nullptr, 0);
  }
  peer.sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

void ShmChannel::check_descriptors() {
  const Desc& mine = slot(me_).desc[seq_ % 4];
  auto describe = [](const Desc& d) {
    std::string s = str(kind_name(d.kind), "(count=", d.count, ", ", dtype_name(static_cast<DType>(d.dtype)));
    if (d.kind == kAllreduce || d.kind == kReduceScatter || d.kind == kReduceScatterInplace)
      s += str(", ", combine_name(d.op));
    if (d.kind == kBroadcast) s += str(", root=", d.root);
    s += d.zc ? str(", shared buffer @", d.where & ((int64_t{1} << 40) - 1), ")") : std::string(")");
    return s;
  };
  for (int j = 0; j < n_; ++j) {
    if (j == me_) continue;
    const Desc& d = slot(j).desc[seq_ % 4];
    bool same = d.seq == mine.seq && d.kind == mine.kind && d.dtype == mine.dtype && d.op == mine.op &&
                d.root == mine.root && d.count == mine.count && d.zc == mine.zc && d.where == mine.where;
    if (!same)
      fail_op(str("ops differ across ranks: rank ", node_.config_.first_rank + me_, " issued ",
                  describe(mine), " but rank ", node_.config_.first_rank + j, " issued ",
                  d.seq == mine.seq ? describe(d) : str("op #", d.seq, " ", describe(d))));
  }
}

void ShmChannel::wait_all(uint64_t target, bool check_desc) {
  auto arrived = [&](int j) { return slot(j).counter.load(std::memory_order_acquire) >= target; };
  for (int j = 0; j < n_; ++j) {
    if (j == me_ || arrived(j)) continue;
    auto last_pid_check = Clock::now();
    bool warned = false;
    for (uint64_t iter = 0; !arrived(j); ++iter) {
      if (iter < kSpin) {
        _mm_pause();
        continue;
      }
      if (iter < kSpin + kYield) {
        ::sched_yield();
        if ((iter & 7) != 0) continue;
      } else {
        // Woken by the peer's next arrival; the cap keeps the diagnostics below running.
        sleep_on(slot(j), target, std::chrono::microseconds(50000));
      }
      // Slow path: diagnostics for every rank not yet arrived.
      auto now = Clock::now();
      double elapsed = std::chrono::duration<double>(now - start_).count();
      double limit = std::chrono::duration<double>(timeout_).count();
      bool check_pids = now - last_pid_check > std::chrono::milliseconds(100);
      if (check_pids) last_pid_check = now;
      std::string missing;
      for (int r = 0; r < n_; ++r) {
        if (r == me_ || arrived(r)) continue;
        Slot& s = slot(r);
        int grank = node_.config_.first_rank + r;
        if (s.failed.load(std::memory_order_acquire))
          fail_op(
              str("rank ", grank, " failed: ", std::string(s.reason, strnlen(s.reason, sizeof(s.reason)))));
        if (check_pids && pid_dead(node_.peer_pid(r)))
          fail_op(str("rank ", grank, " (pid ", node_.peer_pid(r), ") died; noticed after ", elapsed, " s"));
        uint64_t at = s.seq_posted.load(std::memory_order_acquire);
        missing += str(missing.empty() ? "" : ", ", grank, at < seq_ ? str(" (still at op #", at, ")") : "");
      }
      if (!warned && elapsed > limit / 2) {
        warned = true;
        log::warn(op_name(), ": rank(s) ", missing, " have not joined after ", elapsed, " s (timeout ", limit,
                  " s, CORETRAIN_COMM_TIMEOUT)");
      }
      if (elapsed > limit) fail_op(str("timed out after ", elapsed, " s; rank(s) not arrived: ", missing));
    }
  }
  if (check_desc) check_descriptors();
}

// ------------------------------------------------------------------------------------------------ algorithms

// Step k uses staging buffer k%2. Arrivals per step: X (my pieces staged, and my copy-out of step k-1 done)
// and Y (my slice reduced). Buffer k%2 is free again for step k+2 once everyone passed X of step k+1, which
// we have waited for by then, so only the first two steps wait on the previous op.
void ShmChannel::pipeline_reduce(const uint8_t* src, uint8_t* dst, uint8_t* my_out,
                                 const std::vector<Range>& ranges, DType dtype, Combine op, float divisor,
                                 bool gather) {
  const int64_t esz = dtype_size(dtype), P = piece_elems(dtype);
  int64_t longest = 0;
  for (auto& r : ranges) longest = std::max(longest, r.len);
  const int64_t steps = (longest + P - 1) / P;
  std::vector<const uint8_t*> ins(n_);
  uint8_t* outs[2];
  auto piece = [&](int j, int64_t off) { return std::clamp<int64_t>(ranges[j].len - off, 0, P); };
  auto copy_out = [&](int b, int64_t off) {
    for (int j = 0; j < n_; ++j)
      if (j != me_ && piece(j, off) > 0)
        copy_bytes(dst + (ranges[j].lo + off) * esz, stage(j, b) + j * P * esz, piece(j, off) * esz);
  };
  int prev_b = -1;
  uint64_t last_x = 0;
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t off = k * P;
    int b = pick_buffer();
    if (k < 2) wait_all(reuse_[b], false);
    for (int j = 0; j < n_; ++j)
      if (j != me_ && piece(j, off) > 0)
        copy_bytes(stage(me_, b) + j * P * esz, src + (ranges[j].lo + off) * esz, piece(j, off) * esz);
    if (gather && k > 0) copy_out(prev_b, off - P);
    arrive();
    last_x = counter_;
    wait_all(counter_, k == 0);
    if (int64_t m = piece(me_, off); m > 0) {
      for (int j = 0; j < n_; ++j)
        ins[j] = j == me_ ? src + (ranges[me_].lo + off) * esz : stage(j, b) + me_ * P * esz;
      outs[0] = my_out + off * esz;
      outs[1] = stage(me_, b) + me_ * P * esz;
      reduce_any(dtype, ins.data(), n_, outs, gather ? 2 : 1, m, op, divisor);
    }
    arrive();
    if (gather) wait_all(counter_, false);
    if (!gather) reuse_[b] = counter_;
    prev_b = b;
  }
  if (gather && steps > 0) {
    copy_out(prev_b, (steps - 1) * P);
    arrive();
    reuse_[prev_b] = counter_;
    if (steps > 1) reuse_[prev_b ^ 1] = last_x;
  }
}

// One arrival per step: my piece staged (and my copy-out of step k-1 done).
void ShmChannel::pipeline_gather(const uint8_t* my_src, uint8_t* dst, const std::vector<Range>& ranges,
                                 DType dtype) {
  const int64_t esz = dtype_size(dtype), P = piece_elems(dtype);
  if (my_src != dst + ranges[me_].lo * esz)
    copy_bytes(dst + ranges[me_].lo * esz, my_src, ranges[me_].len * esz);
  int64_t longest = 0;
  for (auto& r : ranges) longest = std::max(longest, r.len);
  const int64_t steps = (longest + P - 1) / P;
  auto piece = [&](int j, int64_t off) { return std::clamp<int64_t>(ranges[j].len - off, 0, P); };
  auto copy_out = [&](int b, int64_t off) {
    for (int j = 0; j < n_; ++j)
      if (j != me_ && piece(j, off) > 0)
        copy_bytes(dst + (ranges[j].lo + off) * esz, stage(j, b) + j * P * esz, piece(j, off) * esz);
  };
  int prev_b = -1;
  uint64_t last_x = 0;
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t off = k * P;
    int b = pick_buffer();
    if (k < 2) wait_all(reuse_[b], false);
    if (piece(me_, off) > 0)
      copy_bytes(stage(me_, b) + me_ * P * esz, my_src + off * esz, piece(me_, off) * esz);
    if (k > 0) copy_out(prev_b, off - P);
    arrive();
    last_x = counter_;
    wait_all(counter_, k == 0);
    prev_b = b;
  }
  if (steps > 0) {
    copy_out(prev_b, (steps - 1) * P);
    arrive();
    reuse_[prev_b] = counter_;
    if (steps > 1) reuse_[prev_b ^ 1] = last_x;
  }
}

void ShmChannel::allreduce(void* buf, int64_t count, DType dtype, Combine op, float divisor,
                           ShmTimeout timeout) {
  begin(kAllreduce, count, dtype, static_cast<uint8_t>(op), -1, buf, timeout);
  auto* p = static_cast<uint8_t*>(buf);
  const int64_t esz = dtype_size(dtype), bytes = count * esz;
  if (count == 0) {
    arrive();
    wait_all(counter_, true);
    return;
  }
  if (!zero_copy_ && bytes <= std::min<int64_t>(kSmallBytes, node_.config_.stage_bytes)) {
    // Small: everyone publishes a copy and reduces all copies in rank order (identical results everywhere).
    // No allocation on this path: it is the latency-bound one.
    int b = pick_buffer();
    wait_all(reuse_[b], false);
    copy_bytes(stage(me_, b), p, bytes);
    arrive();
    wait_all(counter_, true);
    for (int j = 0; j < n_; ++j) small_ins_[j] = stage(j, b);
    reduce_any(dtype, small_ins_.data(), n_, &p, 1, count, op, divisor);
    arrive();
    reuse_[b] = counter_;
    return;
  }
  std::vector<Range> ranges(n_);
  for (int j = 0; j < n_; ++j) ShmNode::slice(count, n_, j, ranges[j].lo, ranges[j].len);
  if (zero_copy_) {
    // Peers' buffers are read and written in place: rank r reduces slice r of every buffer into every buffer.
    arrive();
    wait_all(counter_, true);
    std::vector<const uint8_t*> ins(n_);
    std::vector<uint8_t*> outs(n_);
    for (int j = 0; j < n_; ++j) outs[j] = peer_ptr(p, j) + ranges[me_].lo * esz, ins[j] = outs[j];
    reduce_any(dtype, ins.data(), n_, outs.data(), n_, ranges[me_].len, op, divisor);
    arrive();
    wait_all(counter_, false);  // nobody touches its buffer while a peer still writes into it
    return;
  }
  pipeline_reduce(p, p, p + ranges[me_].lo * esz, ranges, dtype, op, divisor, true);
}

void ShmChannel::reduce_scatter(const void* send, void* recv, int64_t recv_count, DType dtype, Combine op,
                                float divisor, ShmTimeout timeout) {
  begin(kReduceScatter, recv_count, dtype, static_cast<uint8_t>(op), -1, nullptr, timeout);
  if (recv_count == 0) {
    arrive();
    wait_all(counter_, true);
    return;
  }
  std::vector<Range> ranges(n_);
  for (int j = 0; j < n_; ++j) ranges[j] = {j * recv_count, recv_count};
  pipeline_reduce(static_cast<const uint8_t*>(send), nullptr, static_cast<uint8_t*>(recv), ranges, dtype, op,
                  divisor, false);
}

void ShmChannel::allgather(const void* send, void* recv, int64_t count, DType dtype, ShmTimeout timeout) {
  begin(kAllgather, count, dtype, 0, -1, nullptr, timeout);
  if (count == 0) {
    arrive();
    wait_all(counter_, true);
    return;
  }
  std::vector<Range> ranges(n_);
  for (int j = 0; j < n_; ++j) ranges[j] = {j * count, count};
  pipeline_gather(static_cast<const uint8_t*>(send), static_cast<uint8_t*>(recv), ranges, dtype);
}

void ShmChannel::alltoall(const void* send, void* recv, int64_t count, DType dtype, ShmTimeout timeout) {
  begin(kAlltoall, count, dtype, 0, -1, nullptr, timeout);
  if (count == 0) {
    arrive();
    wait_all(counter_, true);
    return;
  }
  const int64_t esz = dtype_size(dtype), P = piece_elems(dtype);
  auto* s = static_cast<const uint8_t*>(send);
  auto* r = static_cast<uint8_t*>(recv);
  copy_bytes(r + me_ * count * esz, s + me_ * count * esz, count * esz);
  const int64_t steps = (count + P - 1) / P;
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t off = k * P, m = std::min(P, count - off);
    int b = pick_buffer();
    wait_all(reuse_[b], false);
    for (int j = 0; j < n_; ++j)
      if (j != me_) copy_bytes(stage(me_, b) + j * P * esz, s + (j * count + off) * esz, m * esz);
    arrive();
    wait_all(counter_, k == 0);
    for (int j = 0; j < n_; ++j)
      if (j != me_) copy_bytes(r + (j * count + off) * esz, stage(j, b) + me_ * P * esz, m * esz);
    arrive();
    reuse_[b] = counter_;
  }
}

void ShmChannel::broadcast(void* buf, int64_t count, DType dtype, int root, ShmTimeout timeout) {
  begin(kBroadcast, count, dtype, 0, root, nullptr, timeout);
  if (root < 0 || root >= n_) fail_op(str("root ", root, " outside 0..", n_ - 1));
  if (count == 0) {
    arrive();
    wait_all(counter_, true);
    return;
  }
  const int64_t esz = dtype_size(dtype);
  const int64_t chunk = static_cast<int64_t>(node_.config_.stage_bytes) / esz;
  auto* p = static_cast<uint8_t*>(buf);
  for (int64_t off = 0, k = 0; off < count; off += chunk, ++k) {
    const int64_t m = std::min(chunk, count - off);
    int b = pick_buffer();
    wait_all(reuse_[b], false);
    if (me_ == root) copy_bytes(stage(root, b), p + off * esz, m * esz);
    arrive();
    wait_all(counter_, k == 0);
    if (me_ != root) copy_bytes(p + off * esz, stage(root, b), m * esz);
    arrive();
    reuse_[b] = counter_;
  }
}

void ShmChannel::barrier(ShmTimeout timeout) {
  begin(kBarrier, 0, DType::f32, 0, -1, nullptr, timeout);
  arrive();
  wait_all(counter_, true);
}

void ShmChannel::reduce_scatter_inplace(void* buf, int64_t count, DType dtype, Combine op,
                                        ShmTimeout timeout) {
  begin(kReduceScatterInplace, count, dtype, static_cast<uint8_t>(op), -1, buf, timeout);
  auto* p = static_cast<uint8_t*>(buf);
  const int64_t esz = dtype_size(dtype);
  std::vector<Range> ranges(n_);
  for (int j = 0; j < n_; ++j) ShmNode::slice(count, n_, j, ranges[j].lo, ranges[j].len);
  if (count == 0 || zero_copy_) {
    arrive();
    wait_all(counter_, true);
    if (count == 0) return;
    // Peers read only their own slice of my buffer and I change only mine until the allgather half, which
    // starts with a full arrival: no closing wait needed here.
    std::vector<const uint8_t*> ins(n_);
    for (int j = 0; j < n_; ++j) ins[j] = peer_ptr(p, j) + ranges[me_].lo * esz;
    uint8_t* out = p + ranges[me_].lo * esz;
    reduce_any(dtype, ins.data(), n_, &out, 1, ranges[me_].len, op, 0.f);
    return;
  }
  pipeline_reduce(p, p, p + ranges[me_].lo * esz, ranges, dtype, op, 0.f, false);
}

void ShmChannel::allgather_inplace(void* buf, int64_t count, DType dtype, ShmTimeout timeout) {
  begin(kAllgatherInplace, count, dtype, 0, -1, buf, timeout);
  auto* p = static_cast<uint8_t*>(buf);
  const int64_t esz = dtype_size(dtype);
  std::vector<Range> ranges(n_);
  for (int j = 0; j < n_; ++j) ShmNode::slice(count, n_, j, ranges[j].lo, ranges[j].len);
  if (count == 0 || zero_copy_) {
    arrive();
    wait_all(counter_, true);
    if (count == 0) return;
    for (int j = 0; j < n_; ++j)
      if (j != me_)
        copy_bytes(p + ranges[j].lo * esz, peer_ptr(p, j) + ranges[j].lo * esz, ranges[j].len * esz);
    arrive();
    wait_all(counter_, false);
    return;
  }
  pipeline_gather(p + ranges[me_].lo * esz, p, ranges, dtype);
}

void* ShmChannel::alloc(int64_t bytes, ShmTimeout timeout, bool node_shared) {
  begin(kAlloc, bytes, DType::f32, 0, -1, nullptr, timeout);
  if (bytes < 0) fail_op(str("negative size ", bytes));
  size_t stride = round_up(static_cast<size_t>(std::max<int64_t>(bytes, 1)), 4096);
  size_t id;
  {
    std::lock_guard<std::mutex> lock(node_.alloc_mu_);
    id = node_.allocs_.size();
  }
  std::string name = str(node_.config_.name, "-a", id);
  ShmSegment seg;
  if (me_ == 0) seg = ShmSegment::create(name, node_shared ? stride : stride * n_);
  arrive();
  wait_all(counter_, true);
  if (me_ != 0 && !ShmSegment::try_open(name, seg)) fail_op(str("segment /dev/shm", name, " vanished"));
  arrive();
  wait_all(counter_, false);
  seg.unlink();
  uint8_t* mine = node_shared ? seg.data() : seg.data() + me_ * stride;
  std::lock_guard<std::mutex> lock(node_.alloc_mu_);
  node_.allocs_.push_back({std::move(seg), node_shared ? 0 : stride, static_cast<size_t>(bytes)});
  return mine;
}

}  // namespace ct::comm

#include "train/dist_context.h"

#include <csignal>
#include <cstring>

#include "core/error.h"

namespace ct::train {

DistContext dist_context(comm::Communicator& comm) {
  DistContext d;
  d.rank = comm.rank();
  d.world = comm.size();
  d.local_rank = comm.local_rank();
  d.local_world = comm.local_size();
  d.node = comm.node();
  d.num_nodes = comm.num_nodes();
  d.comm = &comm;
  return d;
}

double mean_over_ranks(const DistContext& d, double v) {
  if (!d.distributed()) return v;
  // Two floats: the value and its rounding error, so the mean keeps about double precision.
  float parts[2] = {static_cast<float>(v), static_cast<float>(v - static_cast<float>(v))};
  comm::AllreduceOptions o;
  o.op = comm::ReduceOp::sum;
  d.comm->allreduce(parts, 2, DType::f32, o);
  return (static_cast<double>(parts[0]) + static_cast<double>(parts[1])) / d.world;
}

StepAgreement agree_step(const DistContext& d, double v, int my_signal) {
  if (!d.distributed()) return {v, my_signal};
  // The loss as in mean_over_ranks, then how many ranks have seen SIGTERM and how many another stop signal.
  float parts[4] = {static_cast<float>(v), static_cast<float>(v - static_cast<float>(v)),
                    my_signal == SIGTERM ? 1.0f : 0.0f, my_signal != 0 && my_signal != SIGTERM ? 1.0f : 0.0f};
  comm::AllreduceOptions o;
  o.op = comm::ReduceOp::sum;
  d.comm->allreduce(parts, 4, DType::f32, o);
  StepAgreement a;
  a.mean = (static_cast<double>(parts[0]) + static_cast<double>(parts[1])) / d.world;
  a.stop_signal = parts[2] > 0 ? SIGTERM : parts[3] > 0 ? SIGINT : 0;
  return a;
}

// 64-bit values cross as pairs of f32 bit patterns: allgather and broadcast copy bytes, never do arithmetic.
std::vector<uint64_t> allgather_u64(const DistContext& d, uint64_t v) {
  if (!d.distributed()) return {v};
  std::vector<uint64_t> all(static_cast<size_t>(d.world));
  float mine[2];
  std::memcpy(mine, &v, 8);
  d.comm->allgather(mine, all.data(), 2, DType::f32);
  return all;
}

void broadcast_floats(const DistContext& d, float* data, int64_t n, int root) {
  if (!d.distributed() || n == 0) return;
  comm::BroadcastOptions o;
  o.root = root;
  d.comm->broadcast(data, n, DType::f32, o);
}

void broadcast_string(const DistContext& d, std::string* s, int root) {
  if (!d.distributed()) return;
  uint64_t len = s->size();
  float lenf[2];
  std::memcpy(lenf, &len, 8);
  broadcast_floats(d, lenf, 2, root);
  std::memcpy(&len, lenf, 8);
  std::vector<float> buf((len + 3) / 4, 0.0f);
  if (d.rank == root) std::memcpy(buf.data(), s->data(), s->size());
  broadcast_floats(d, buf.data(), static_cast<int64_t>(buf.size()), root);
  s->assign(reinterpret_cast<const char*>(buf.data()), len);
}

std::vector<std::string> allgather_strings(const DistContext& d, const std::string& mine) {
  if (!d.distributed()) return {mine};
  // The longest string sets the slot size; lengths travel in the first 8 bytes of each slot.
  float longest = static_cast<float>(mine.size());
  comm::AllreduceOptions o;
  o.op = comm::ReduceOp::max;
  d.comm->allreduce(&longest, 1, DType::f32, o);
  const int64_t slot = 2 + (static_cast<int64_t>(longest) + 3) / 4;  // floats
  std::vector<float> send(static_cast<size_t>(slot), 0.0f), all(static_cast<size_t>(slot * d.world));
  const uint64_t len = mine.size();
  std::memcpy(send.data(), &len, 8);
  std::memcpy(send.data() + 2, mine.data(), mine.size());
  d.comm->allgather(send.data(), all.data(), slot, DType::f32);
  std::vector<std::string> out;
  for (int r = 0; r < d.world; ++r) {
    const float* p = all.data() + r * slot;
    uint64_t n;
    std::memcpy(&n, p, 8);
    out.emplace_back(reinterpret_cast<const char*>(p + 2), n);
  }
  return out;
}

void barrier(const DistContext& d) {
  if (d.distributed()) d.comm->barrier();
}

void check_same_on_all_ranks(const DistContext& d, uint64_t hash, const std::string& what,
                             const std::string& detail) {
  if (!d.distributed()) return;
  const auto all = allgather_u64(d, hash);
  std::string bad;
  bool me = false;
  for (int r = 1; r < d.world; ++r)
    if (all[static_cast<size_t>(r)] != all[0]) {
      bad += (bad.empty() ? "" : ", ") + std::to_string(r);
      me |= r == d.rank;
    }
  if (bad.empty()) return;
  if (me && !detail.empty()) fail(what, " differs from rank 0's on rank(s) ", bad, "; here: ", detail);
  fail(what, " differs from rank 0's on rank(s) ", bad);
}

}  // namespace ct::train

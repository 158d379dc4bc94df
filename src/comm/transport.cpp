// The implementation-independent parts of Transport: group naming, timeout errors, and bf16 reductions in
// f32.
#include "comm/transport.h"

#include <algorithm>
#include <sstream>

#include "comm/comm_error.h"
#include "core/error.h"

namespace ct::comm {

const char* wire_reduce_name(WireReduce op) {
  switch (op) {
    case WireReduce::kSum:
      return "sum";
    case WireReduce::kMax:
      return "max";
    case WireReduce::kMin:
      return "min";
  }
  return "?";
}

Transport::Transport(std::vector<int> ranks, int index) : ranks_(std::move(ranks)), index_(index) {
  CT_CHECK(!ranks_.empty(), "transport: empty group");
  CT_CHECK(index_ >= 0 && index_ < size(), "transport: my index ", index_, " outside a group of ", size());
}

std::string Transport::describe() const {
  std::ostringstream s;
  s << kind() << " group [";
  for (int i = 0; i < size(); ++i) s << (i ? "," : "") << ranks_[i];
  s << "] (me: rank " << ranks_[index_] << ")";
  return s.str();
}

void Transport::fail_timeout(const char* op, Timeout timeout, const std::vector<int>& missing_members) const {
  std::ostringstream who;
  mark_comm_failed();  // peers may be gone: exit-time cleanup must not wait for them
  for (size_t i = 0; i < missing_members.size(); ++i) who << (i ? "," : "") << ranks_.at(missing_members[i]);
  fail(kind(), " ", op, " timed out after ", timeout.count(), " ms in ", describe(),
       "; no answer from rank(s) ", missing_members.empty() ? std::string("?") : who.str());
}

void Transport::allreduce_bf16(bf16* data, size_t count, WireReduce op, Timeout timeout) {
  std::vector<float> wide(std::min(count, kBf16ChunkElems));
  // Every member walks the same chunk boundaries, so the chunked calls pair up across the group.
  for (size_t off = 0; off < count || (count == 0 && off == 0); off += kBf16ChunkElems) {
    size_t n = std::min(kBf16ChunkElems, count - off);
    bf16_to_f32(data + off, wide.data(), static_cast<int64_t>(n));
    allreduce(wide.data(), n, op, timeout);
    f32_to_bf16(wide.data(), data + off, static_cast<int64_t>(n));
    if (count == 0) break;
  }
}

void Transport::reduce_scatter_bf16(const bf16* in, bf16* out, size_t count, WireReduce op, Timeout timeout) {
  const size_t p = static_cast<size_t>(size());
  const size_t chunk = std::max<size_t>(1, kBf16ChunkElems / p);
  std::vector<float> wide_in(std::min(count, chunk) * p), wide_out(std::min(count, chunk));
  for (size_t off = 0; off < count || (count == 0 && off == 0); off += chunk) {
    size_t n = std::min(chunk, count - off);
    for (size_t b = 0; b < p; ++b)
      bf16_to_f32(in + b * count + off, wide_in.data() + b * n, static_cast<int64_t>(n));
    reduce_scatter(wide_in.data(), wide_out.data(), n, op, timeout);
    f32_to_bf16(wide_out.data(), out + off, static_cast<int64_t>(n));
    if (count == 0) break;
  }
}

}  // namespace ct::comm

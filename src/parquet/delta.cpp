#include "parquet/delta.h"

#include <cstring>

#include "core/error.h"
#include "parquet/rle.h"

namespace ct::parquet {
namespace {

uint64_t uleb(Span in, size_t& pos, const char* what) {
  uint64_t v = 0;
  for (int i = 0; i < 10; ++i) {
    if (pos >= in.n) fail("DELTA_BINARY_PACKED ", what, " ends early");
    const uint8_t b = in.p[pos++];
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) return v;
  }
  fail("DELTA_BINARY_PACKED ", what, " varint longer than 10 bytes");
}

int64_t zigzag(uint64_t u) {
  return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
}

}  // namespace

size_t decode_delta_binary_packed(Span in, size_t max_count, int bits, std::vector<int64_t>& out) {
  size_t pos = 0;
  const uint64_t block_size = uleb(in, pos, "block size");
  const uint64_t miniblocks = uleb(in, pos, "miniblock count");
  const uint64_t total = uleb(in, pos, "value count");
  uint64_t value = static_cast<uint64_t>(zigzag(uleb(in, pos, "first value")));
  if (block_size == 0 || block_size % 128 != 0 || block_size > (1u << 20))
    fail("DELTA_BINARY_PACKED block size ", block_size, " (expected a multiple of 128)");
  if (miniblocks == 0 || block_size % miniblocks != 0 || (block_size / miniblocks) % 32 != 0)
    fail("DELTA_BINARY_PACKED ", miniblocks, " miniblocks per block of ", block_size,
         " (need multiples of 32 values)");
  if (total > max_count)
    fail("DELTA_BINARY_PACKED holds ", total, " values, the page has room for ", max_count);
  const size_t per_mini = static_cast<size_t>(block_size / miniblocks);
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  auto emit = [&](uint64_t v) {
    v &= mask;
    // Sign-extend 32-bit values so INT32 columns read back negative numbers.
    if (bits == 32)
      out.push_back(static_cast<int32_t>(static_cast<uint32_t>(v)));
    else
      out.push_back(static_cast<int64_t>(v));
  };
  if (total == 0) return pos;
  emit(value);
  size_t left = static_cast<size_t>(total) - 1;
  std::vector<uint8_t> widths(static_cast<size_t>(miniblocks));
  while (left > 0) {
    const uint64_t min_delta = static_cast<uint64_t>(zigzag(uleb(in, pos, "min delta")));
    if (in.n - pos < widths.size()) fail("DELTA_BINARY_PACKED bit widths end early");
    std::memcpy(widths.data(), in.p + pos, widths.size());
    pos += widths.size();
    for (size_t m = 0; m < widths.size() && left > 0; ++m) {
      const int w = widths[m];
      if (w > bits) fail("DELTA_BINARY_PACKED miniblock bit width ", w, " exceeds ", bits);
      const size_t mini_bytes = per_mini * static_cast<size_t>(w) / 8;
      const size_t take = std::min(per_mini, left);
      // A writer may stop the last miniblock short of its padding; only the bits used must be present.
      const size_t need = (take * static_cast<size_t>(w) + 7) / 8;
      if (in.n - pos < need)
        fail("DELTA_BINARY_PACKED miniblock needs ", need, " bytes, ", in.n - pos, " left");
      BitReader br(in.p + pos, std::min(mini_bytes, in.n - pos));
      for (size_t i = 0; i < take; ++i) {
        value += min_delta + br.read(w);
        emit(value);
      }
      left -= take;
      pos += std::min(mini_bytes, in.n - pos);
    }
  }
  return pos;
}

void decode_delta_length_byte_array(Span in, size_t count, std::vector<std::string_view>& out) {
  std::vector<int64_t> lengths;
  lengths.reserve(std::min<size_t>(count, in.n));
  size_t pos = decode_delta_binary_packed(in, count, 32, lengths);
  if (lengths.size() != count)
    fail("DELTA_LENGTH_BYTE_ARRAY has ", lengths.size(), " lengths, expected ", count);
  for (int64_t len : lengths) {
    if (len < 0 || static_cast<uint64_t>(len) > in.n - pos)
      fail("DELTA_LENGTH_BYTE_ARRAY value of ", len, " bytes, ", in.n - pos, " left");
    out.emplace_back(reinterpret_cast<const char*>(in.p + pos), static_cast<size_t>(len));
    pos += static_cast<size_t>(len);
  }
}

void decode_delta_byte_array(Span in, size_t count, std::vector<std::string_view>& out,
                             std::unique_ptr<std::vector<uint8_t>>& storage) {
  std::vector<int64_t> prefixes;
  prefixes.reserve(std::min<size_t>(count, in.n));
  const size_t used = decode_delta_binary_packed(in, count, 32, prefixes);
  if (prefixes.size() != count)
    fail("DELTA_BYTE_ARRAY has ", prefixes.size(), " prefix lengths, expected ", count);
  std::vector<std::string_view> suffixes;
  suffixes.reserve(count);
  decode_delta_length_byte_array(Span{in.p + used, in.n - used}, count, suffixes);
  // Prefixes let a tiny page expand to huge output; size it first and cap it.
  constexpr uint64_t kMaxBytes = uint64_t{1} << 30;
  uint64_t total = 0, prev = 0;
  for (size_t i = 0; i < count; ++i) {
    if (prefixes[i] < 0 || static_cast<uint64_t>(prefixes[i]) > prev)
      fail("DELTA_BYTE_ARRAY value ", i, " has prefix ", prefixes[i], " longer than the previous value (",
           prev, ")");
    prev = static_cast<uint64_t>(prefixes[i]) + suffixes[i].size();
    total += prev;
    if (total > kMaxBytes) fail("DELTA_BYTE_ARRAY page expands beyond ", kMaxBytes, " bytes");
  }
  storage = std::make_unique<std::vector<uint8_t>>(static_cast<size_t>(total));
  uint8_t* w = storage->data();
  const uint8_t* last = nullptr;
  for (size_t i = 0; i < count; ++i) {
    const size_t pre = static_cast<size_t>(prefixes[i]);
    if (pre) std::memcpy(w, last, pre);
    if (!suffixes[i].empty()) std::memcpy(w + pre, suffixes[i].data(), suffixes[i].size());
    const size_t len = pre + suffixes[i].size();
    out.emplace_back(reinterpret_cast<const char*>(w), len);
    last = w;
    w += len;
  }
}

}  // namespace ct::parquet

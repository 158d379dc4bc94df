#include "parquet/rle.h"

#include "core/error.h"

namespace ct::parquet {

uint64_t BitReader::read(int bits) {
  if (bits == 0) return 0;
  if (bit_pos_ + static_cast<size_t>(bits) > n_ * 8) fail("bit-packed data ends early (", n_, " bytes)");
  uint64_t v = 0;
  int got = 0;
  while (got < bits) {
    const size_t byte = bit_pos_ >> 3;
    const int off = static_cast<int>(bit_pos_ & 7);
    const int take = std::min(8 - off, bits - got);
    const uint64_t chunk = (p_[byte] >> off) & ((1u << take) - 1);
    v |= chunk << got;
    got += take;
    bit_pos_ += static_cast<size_t>(take);
  }
  return v;
}

int level_bit_width(int max_level) {
  int w = 0;
  while ((1 << w) <= max_level) ++w;
  return w;
}

static uint64_t read_uleb(const uint8_t*& p, const uint8_t* end) {
  uint64_t v = 0;
  for (int i = 0; i < 10; ++i) {
    if (p >= end) fail("RLE run header ends early");
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) return v;
  }
  fail("RLE run header varint longer than 10 bytes");
}

void decode_rle_hybrid(Span in, int bit_width, size_t count, uint32_t* out) {
  if (bit_width < 0 || bit_width > 32) fail("RLE bit width ", bit_width, " (expected 0..32)");
  const uint8_t* p = in.p;
  const uint8_t* end = in.p + in.n;
  size_t done = 0;
  const size_t value_bytes = static_cast<size_t>((bit_width + 7) / 8);
  while (done < count) {
    if (p >= end) fail("RLE data ends after ", done, " of ", count, " values");
    const uint64_t header = read_uleb(p, end);
    if (header & 1) {
      const uint64_t groups = header >> 1;
      if (groups == 0 || groups > (uint64_t{1} << 28)) fail("bit-packed run of ", groups, " groups");
      const size_t run = static_cast<size_t>(groups * 8);
      const size_t take = std::min(run, count - done);
      const size_t run_bytes = static_cast<size_t>(groups) * static_cast<size_t>(bit_width);
      // The last run may be cut at the values needed; writers pad it, but only the used bits must be there.
      const size_t need = (take * static_cast<size_t>(bit_width) + 7) / 8;
      const size_t avail = static_cast<size_t>(end - p);
      if (need > avail) fail("bit-packed run needs ", need, " bytes, ", avail, " left");
      BitReader br(p, std::min(run_bytes, avail));
      for (size_t i = 0; i < take; ++i) out[done + i] = static_cast<uint32_t>(br.read(bit_width));
      done += take;
      p += std::min(run_bytes, avail);
    } else {
      const uint64_t run = header >> 1;
      if (run == 0) fail("RLE run of length 0");
      if (static_cast<size_t>(end - p) < value_bytes) fail("RLE run value ends early");
      uint64_t v = 0;
      for (size_t i = 0; i < value_bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
      p += value_bytes;
      if (bit_width < 32 && (v >> bit_width) != 0)
        fail("RLE run value ", v, " does not fit ", bit_width, " bits");
      const size_t take = static_cast<size_t>(std::min<uint64_t>(run, count - done));
      for (size_t i = 0; i < take; ++i) out[done + i] = static_cast<uint32_t>(v);
      done += take;
    }
  }
}

}  // namespace ct::parquet

// The RLE / bit-packing hybrid (levels, dictionary indices, RLE booleans) and LSB-first bit unpacking
// (shared with the delta encodings).
#pragma once

#include <cstddef>
#include <cstdint>

#include "parquet/values.h"

namespace ct::parquet {

// Reads values of up to 64 bits, least significant bit first, from a byte range.
class BitReader {
 public:
  BitReader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  // Throws when the range holds fewer than `bits` more bits.
  uint64_t read(int bits);
  // Whole bytes consumed so far (a partly read byte counts).
  size_t bytes_used() const { return (bit_pos_ + 7) / 8; }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t bit_pos_ = 0;
};

// Reads `count` values of `bit_width` (0..32) bits from an RLE/bit-packed hybrid run sequence with no length
// prefix. Throws when the runs end early or an RLE value does not fit the width.
void decode_rle_hybrid(Span in, int bit_width, size_t count, uint32_t* out);

// Bit width for levels up to `max_level`: ceil(log2(max_level + 1)).
int level_bit_width(int max_level);

}  // namespace ct::parquet

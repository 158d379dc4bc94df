// One [rows, width] tensor of a flat slab with a flag per row, and the walk that cuts a slab range into runs
// outside the tensor and runs of rows with the same flag. The norm, clipping and the optimizer take one to
// skip the word embeddings' rows whose gradient is known to be zero (see core/row_set.h): for such a row
// the dense pass is an exact no-op (or, in AdamW, the weight decay alone), so skipping it changes no bit.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ct::kernels {

struct RowFlags {
  int64_t offset = 0, rows = 0, width = 0;
  const uint8_t* flags = nullptr;  // [rows]; null: every row flagged (the dense pass)
  bool active() const { return rows > 0 && width > 0 && flags != nullptr; }
  int64_t end() const { return offset + rows * width; }
};

// fn(begin, end, flagged) over [begin, end) in order, in maximal runs; flagged is true outside the tensor.
template <class Fn>
void for_each_flag_run(const RowFlags& f, int64_t begin, int64_t end, Fn&& fn) {
  const int64_t a = f.active() ? std::max(begin, f.offset) : end,
                b = f.active() ? std::min(end, f.end()) : end;
  if (a >= b) {
    if (begin < end) fn(begin, end, true);
    return;
  }
  if (begin < a) fn(begin, a, true);
  int64_t pos = a;
  while (pos < b) {
    int64_t r = (pos - f.offset) / f.width;
    const bool flagged = f.flags[r] != 0;
    while (r + 1 < f.rows && f.offset + (r + 1) * f.width < b && (f.flags[r + 1] != 0) == flagged) ++r;
    const int64_t e = std::min(b, f.offset + (r + 1) * f.width);
    fn(pos, e, flagged);
    pos = e;
  }
  if (b < end) fn(b, end, true);
}

}  // namespace ct::kernels

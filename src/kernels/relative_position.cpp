#include "kernels/relative_position.h"

#include <cmath>
#include <cstdlib>

#include "core/error.h"

namespace ct::kernels {

int32_t log_bucket_position(int64_t distance, int64_t bucket_size, int64_t max_position) {
  if (bucket_size <= 0 || max_position <= 0) return static_cast<int32_t>(distance);
  const int64_t mid = bucket_size / 2;
  CT_CHECK(mid > 1 && max_position > mid, "relative positions: position_buckets ", bucket_size,
           " and max_relative_positions ", max_position, " (expected buckets >= 4 and fewer than the max)");
  const int64_t abs_pos = std::llabs(distance);
  if (abs_pos <= mid) return static_cast<int32_t>(distance);
  // torch: abs_pos / mid and the (max_position - 1) / mid scalar become f32 tensors; log, divide, scale and
  // ceil in f32. The rounding matters: ceil flips where the f64 value sits just under an integer.
  const float ratio = static_cast<float>(abs_pos) / static_cast<float>(mid);
  const auto base = static_cast<float>(static_cast<double>(max_position - 1) / static_cast<double>(mid));
  const float scaled = std::log(ratio) / std::log(base) * static_cast<float>(mid - 1);
  const auto log_pos = static_cast<int64_t>(std::ceil(scaled)) + mid;
  return static_cast<int32_t>(distance < 0 ? -log_pos : log_pos);
}

std::vector<int32_t> relative_position_buckets(int64_t T, int64_t bucket_size, int64_t max_position) {
  CT_CHECK(T > 0, "relative positions: sequence length ", T, " (expected > 0)");
  std::vector<int32_t> out(static_cast<size_t>(2 * T - 1));
  for (int64_t d = -(T - 1); d <= T - 1; ++d)
    out[d + T - 1] = log_bucket_position(d, bucket_size, max_position);
  return out;
}

}  // namespace ct::kernels

// Tensor: a shape, a dtype (f32 or bf16) and a pointer into 64-byte aligned storage it may share with other
// tensors. Views into one slab are how parameters and gradients live (a checkpoint is one write; the gradient
// slab can sit in shared memory). No autograd here: ops are plain functions in kernels/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/bf16.h"

namespace ct {

enum class DType : uint8_t { f32, bf16 };

inline int64_t dtype_size(DType t) {
  return t == DType::f32 ? 4 : 2;
}
inline const char* dtype_name(DType t) {
  return t == DType::f32 ? "f32" : "bf16";
}

using Shape = std::vector<int64_t>;
int64_t shape_numel(const Shape& shape);
std::string shape_str(const Shape& shape);

// 64-byte aligned, zero-initialized memory owned by shared_ptr so views keep it alive. Blocks of 16 MiB and
// more are mapped on 2 MiB boundaries with transparent huge pages advised, and first touched by all threads.
std::shared_ptr<void> aligned_alloc_shared(int64_t nbytes);

class Tensor {
 public:
  Tensor() = default;
  // Fresh zeroed storage.
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32);
  // A tensor over memory someone else owns (a slab, a shared-memory segment); `owner` may be null.
  static Tensor wrap(void* data, const Shape& shape, DType dtype, std::shared_ptr<void> owner = nullptr);

  // A view of `shape` starting `offset` elements into this tensor's storage.
  Tensor view(int64_t offset, const Shape& shape) const;
  Tensor reshape(const Shape& shape) const;

  const Shape& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_.at(i < 0 ? shape_.size() + i : i); }
  int ndim() const { return static_cast<int>(shape_.size()); }
  DType dtype() const { return dtype_; }
  int64_t numel() const { return numel_; }
  int64_t nbytes() const { return numel_ * dtype_size(dtype_); }
  bool defined() const { return data_ != nullptr || numel_ == 0; }

  void* data() const { return data_; }
  float* f32() const;
  bf16* bf() const;

  void fill_zero();

 private:
  Shape shape_;
  DType dtype_ = DType::f32;
  int64_t numel_ = 0;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;
};

}  // namespace ct

#include "core/tensor.h"

#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace ct {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    CT_CHECK(d >= 0, "negative dimension in shape ", shape_str(shape));
    n *= d;
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::shared_ptr<void> aligned_alloc_shared(int64_t nbytes) {
  const size_t size = static_cast<size_t>((nbytes + 63) / 64 * 64);
  void* p = std::aligned_alloc(64, size ? size : 64);
  if (!p) fail("out of memory allocating ", nbytes, " bytes");
  std::memset(p, 0, size);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.numel_ = shape_numel(shape);
  t.owner_ = aligned_alloc_shared(t.numel_ * dtype_size(dtype));
  t.data_ = t.owner_.get();
  return t;
}

Tensor Tensor::wrap(void* data, const Shape& shape, DType dtype, std::shared_ptr<void> owner) {
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.numel_ = shape_numel(shape);
  t.data_ = data;
  t.owner_ = std::move(owner);
  return t;
}

Tensor Tensor::view(int64_t offset, const Shape& shape) const {
  const int64_t n = shape_numel(shape);
  CT_ASSERT(offset >= 0 && offset + n <= numel_);
  Tensor t = *this;
  t.shape_ = shape;
  t.numel_ = n;
  t.data_ = static_cast<char*>(data_) + offset * dtype_size(dtype_);
  return t;
}

Tensor Tensor::reshape(const Shape& shape) const {
  CT_CHECK(shape_numel(shape) == numel_, "cannot reshape ", shape_str(shape_), " to ", shape_str(shape));
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

float* Tensor::f32() const {
  CT_ASSERT(dtype_ == DType::f32);
  return static_cast<float*>(data_);
}

bf16* Tensor::bf() const {
  CT_ASSERT(dtype_ == DType::bf16);
  return static_cast<bf16*>(data_);
}

void Tensor::fill_zero() {
  if (data_) std::memset(data_, 0, static_cast<size_t>(nbytes()));
}

}  // namespace ct

#include "core/tensor.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include <omp.h>

#include "core/error.h"

namespace ct {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;
// Smaller blocks come from the heap, where glibc keeps and reuses them.
constexpr size_t kMapAtLeast = size_t{16} << 20;

// A large block (activations, gradients, weights: hundreds of MB) straight from the kernel, on 2 MiB
// boundaries and advised to use transparent huge pages: a 2 MiB page is one fault and one TLB entry where
// 4 KiB pages are 512 of each. Fresh anonymous pages read as zero, so nothing is memset; each page is
// touched once here instead, by all threads, because the kernel clears a page in the thread that first
// touches it: a 1 GB activation set cleared by one thread was ~3 s of a BERT-base glue run's first step on a
// 2-core VM, with the other core idle.
std::shared_ptr<void> map_zeroed(size_t size) {
  const size_t mapped = (size + kHugePage - 1) / kHugePage * kHugePage + kHugePage;
  void* base = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  char* p = reinterpret_cast<char*>((b + kHugePage - 1) / kHugePage * kHugePage);
  (void)::madvise(p, size, MADV_HUGEPAGE);  // advice only: without THP the pages stay 4 KiB
  const int64_t pages = static_cast<int64_t>((size + kPage - 1) / kPage);
#pragma omp parallel for schedule(static) if (!omp_in_parallel())
  for (int64_t i = 0; i < pages; ++i) p[i * static_cast<int64_t>(kPage)] = 0;
  return std::shared_ptr<void>(p, [base, mapped](void*) { ::munmap(base, mapped); });
}

}  // namespace

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
  if (size >= kMapAtLeast) {
    auto mapped = map_zeroed(size);
    if (!mapped) fail("out of memory allocating ", nbytes, " bytes");
    return mapped;
  }
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

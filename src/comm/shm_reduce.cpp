// Vector (AVX-512) and scalar reduction kernels; see shm_reduce.h.
#include "comm/shm_reduce.h"

#include <cstring>

#ifdef __AVX512F__
#include <immintrin.h>
// gcc 12's AVX-512 intrinsic headers trip -Wmaybe-uninitialized on their own _mm512_undefined_* operands.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace ct::comm {
namespace {

inline float combine(float a, float b, Combine op) {
  switch (op) {
    case Combine::sum:
      return a + b;
    case Combine::max:
      return a > b ? a : b;  // the vector path uses the same rule
    case Combine::min:
      return a < b ? a : b;
  }
  return a;
}

#ifdef __AVX512F__
template <Combine kOp>
inline __m512 vcombine(__m512 a, __m512 b) {
  if constexpr (kOp == Combine::sum) return _mm512_add_ps(a, b);
  // a > b ? a : b (and a < b ? a : b), exactly the scalar rule.
  if constexpr (kOp == Combine::max) return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ), b, a);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), b, a);
}

inline __m512 load_bf16(const bf16* p, __mmask16 m) {
  __m256i h = _mm256_maskz_loadu_epi16(m, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_maskz_cvtepu16_epi32(0xffff, h), 16));
}

// Round-to-nearest-even to bf16, NaN kept quiet: the same rule as ct::f32_to_bf16_bits.
inline __m256i round_bf16(__m512 v) {
  __m512i u = _mm512_castps_si512(v);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  __m512i q = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  r = _mm512_mask_mov_epi32(r, nan, q);
  return _mm512_maskz_cvtepi32_epi16(0xffff, r);
}

template <Combine kOp>
void reduce_f32_avx(const float* const* in, int n_in, float* const* out, int n_out, int64_t count,
                    float divisor) {
  const __m512 d = _mm512_set1_ps(divisor);
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    __m512 acc = _mm512_loadu_ps(in[0] + i);
    for (int k = 1; k < n_in; ++k) acc = vcombine<kOp>(acc, _mm512_loadu_ps(in[k] + i));
    if (divisor != 0.f) acc = _mm512_div_ps(acc, d);
    for (int o = 0; o < n_out; ++o) _mm512_storeu_ps(out[o] + i, acc);
  }
  if (i < count) {
    __mmask16 m = static_cast<__mmask16>((1u << (count - i)) - 1u);
    __m512 acc = _mm512_maskz_loadu_ps(m, in[0] + i);
    for (int k = 1; k < n_in; ++k) acc = vcombine<kOp>(acc, _mm512_maskz_loadu_ps(m, in[k] + i));
    if (divisor != 0.f) acc = _mm512_div_ps(acc, d);
    for (int o = 0; o < n_out; ++o) _mm512_mask_storeu_ps(out[o] + i, m, acc);
  }
}

template <Combine kOp>
void reduce_bf16_avx(const bf16* const* in, int n_in, bf16* const* out, int n_out, int64_t count,
                     float divisor) {
  const __m512 d = _mm512_set1_ps(divisor);
  for (int64_t i = 0; i < count; i += 16) {
    __mmask16 m = count - i >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (count - i)) - 1u);
    __m512 acc = load_bf16(in[0] + i, m);
    for (int k = 1; k < n_in; ++k) acc = vcombine<kOp>(acc, load_bf16(in[k] + i, m));
    if (divisor != 0.f) acc = _mm512_div_ps(acc, d);
    __m256i r = round_bf16(acc);
    for (int o = 0; o < n_out; ++o) _mm256_mask_storeu_epi16(out[o] + i, m, r);
  }
}
#endif

}  // namespace

void reduce_f32_scalar(const float* const* in, int n_in, float* const* out, int n_out, int64_t count,
                       Combine op, float divisor) {
  for (int64_t i = 0; i < count; ++i) {
    float v = in[0][i];
    for (int k = 1; k < n_in; ++k) v = combine(v, in[k][i], op);
    if (divisor != 0.f) v /= divisor;
    for (int o = 0; o < n_out; ++o) out[o][i] = v;
  }
}

void reduce_bf16_scalar(const bf16* const* in, int n_in, bf16* const* out, int n_out, int64_t count,
                        Combine op, float divisor) {
  for (int64_t i = 0; i < count; ++i) {
    float v = to_f32(in[0][i]);
    for (int k = 1; k < n_in; ++k) v = combine(v, to_f32(in[k][i]), op);
    if (divisor != 0.f) v /= divisor;
    bf16 r = to_bf16(v);
    for (int o = 0; o < n_out; ++o) out[o][i] = r;
  }
}

void reduce_f32(const float* const* in, int n_in, float* const* out, int n_out, int64_t count, Combine op,
                float divisor) {
#ifdef __AVX512F__
  switch (op) {
    case Combine::sum:
      return reduce_f32_avx<Combine::sum>(in, n_in, out, n_out, count, divisor);
    case Combine::max:
      return reduce_f32_avx<Combine::max>(in, n_in, out, n_out, count, divisor);
    case Combine::min:
      return reduce_f32_avx<Combine::min>(in, n_in, out, n_out, count, divisor);
  }
#endif
  reduce_f32_scalar(in, n_in, out, n_out, count, op, divisor);
}

void reduce_bf16(const bf16* const* in, int n_in, bf16* const* out, int n_out, int64_t count, Combine op,
                 float divisor) {
#ifdef __AVX512F__
  switch (op) {
    case Combine::sum:
      return reduce_bf16_avx<Combine::sum>(in, n_in, out, n_out, count, divisor);
    case Combine::max:
      return reduce_bf16_avx<Combine::max>(in, n_in, out, n_out, count, divisor);
    case Combine::min:
      return reduce_bf16_avx<Combine::min>(in, n_in, out, n_out, count, divisor);
  }
#endif
  reduce_bf16_scalar(in, n_in, out, n_out, count, op, divisor);
}

void copy_bytes(void* dst, const void* src, size_t n) {
#ifdef __AVX512F__
  auto* d = static_cast<uint8_t*>(dst);
  auto* s = static_cast<const uint8_t*>(src);
  size_t i = 0;
  for (; i + 256 <= n; i += 256) {
    __m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 64);
    __m512i c = _mm512_loadu_si512(s + i + 128), e = _mm512_loadu_si512(s + i + 192);
    _mm512_storeu_si512(d + i, a);
    _mm512_storeu_si512(d + i + 64, b);
    _mm512_storeu_si512(d + i + 128, c);
    _mm512_storeu_si512(d + i + 192, e);
  }
  if (i < n) std::memcpy(d + i, s + i, n - i);
#else
  if (n > 0) std::memcpy(dst, src, n);
#endif
}

}  // namespace ct::comm

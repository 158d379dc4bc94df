// Sixteen-lane float and int32 vectors through GCC's vector extensions: one AVX-512 register, two AVX2 ones
// (the compiler splits them), so kernels written with them build for every x86-64 level the project targets.
// Loads and stores are unaligned; `permute` selects lanes of one vector by index (vpermps on AVX-512), and
// `transpose16` turns 16 rows of 16 floats into their columns.
#pragma once

#include <cstdint>
#include <cstring>

namespace ct::kernels {

typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

inline v16f load16(const float* p) {
  v16f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline v16i load16(const int32_t* p) {
  v16i v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store16(float* p, v16f v) {
  std::memcpy(p, &v, sizeof v);
}

// out[t] = v[idx[t]], idx in [0, 16).
inline v16f permute(v16f v, v16i idx) {
  return __builtin_shuffle(v, idx);
}

inline v16i reversed(v16i v) {
  return __builtin_shuffle(v, v16i{15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
}

namespace detail {

// One step of the recursive transpose: rows i and i + S (bit S of i clear) swap their S-wide off-diagonal
// blocks, so after steps 8, 4, 2 and 1 element (i, c) has moved to (c, i).
template <int S>
inline void transpose_step(v16f* r) {
#define CT_LO(c) (((c)&S) ? 16 + (c)-S : (c))
#define CT_HI(c) (((c)&S) ? 16 + (c) : (c) + S)
  constexpr v16i lo = {CT_LO(0), CT_LO(1), CT_LO(2),  CT_LO(3),  CT_LO(4),  CT_LO(5),  CT_LO(6),  CT_LO(7),
                       CT_LO(8), CT_LO(9), CT_LO(10), CT_LO(11), CT_LO(12), CT_LO(13), CT_LO(14), CT_LO(15)};
  constexpr v16i hi = {CT_HI(0), CT_HI(1), CT_HI(2),  CT_HI(3),  CT_HI(4),  CT_HI(5),  CT_HI(6),  CT_HI(7),
                       CT_HI(8), CT_HI(9), CT_HI(10), CT_HI(11), CT_HI(12), CT_HI(13), CT_HI(14), CT_HI(15)};
#undef CT_LO
#undef CT_HI
  for (int i = 0; i < 16; ++i)
    if (!(i & S)) {
      const v16f a = r[i], b = r[i + S];
      r[i] = __builtin_shuffle(a, b, lo);
      r[i + S] = __builtin_shuffle(a, b, hi);
    }
}

}  // namespace detail

// r[i][c] becomes r[c][i].
inline void transpose16(v16f* r) {
  detail::transpose_step<8>(r);
  detail::transpose_step<4>(r);
  detail::transpose_step<2>(r);
  detail::transpose_step<1>(r);
}

}  // namespace ct::kernels

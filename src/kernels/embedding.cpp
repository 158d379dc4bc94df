// Embedding gather-sum and its deterministic scatter-add (threads own channel slices, tokens walked in
// order).
#include "kernels/embedding.h"

#include "core/error.h"

namespace ct::kernels {

void embedding_forward(float* out, const int32_t* ids, const int32_t* type_ids, const float* wte,
                       const float* wpe, const float* tte, int64_t B, int64_t T, int64_t C, int64_t V,
                       int64_t P, int64_t TV, const int32_t* pos_ids) {
  CT_CHECK(pos_ids || T <= P, "embeddings: sequence length ", T, " exceeds max_position_embeddings ", P);
  for (int64_t i = 0; i < B * T; ++i) {
    CT_CHECK(ids[i] >= 0 && ids[i] < V, "embeddings: input_ids[", i / T, ", ", i % T, "] = ", ids[i],
             " outside the vocabulary [0, ", V, ")");
    if (tte && type_ids)
      CT_CHECK(type_ids[i] >= 0 && type_ids[i] < TV, "embeddings: token_type_ids[", i / T, ", ", i % T,
               "] = ", type_ids[i], " outside [0, ", TV, ")");
    if (pos_ids)
      CT_CHECK(pos_ids[i] >= 0 && pos_ids[i] < P, "embeddings: position id of token [", i / T, ", ", i % T,
               "] is ", pos_ids[i], ", outside max_position_embeddings ", P);
  }
#pragma omp parallel for schedule(static) if (B * T * C > 16384)
  for (int64_t i = 0; i < B * T; ++i) {
    const int64_t t = pos_ids ? pos_ids[i] : i % T;
    const float* w = wte + static_cast<int64_t>(ids[i]) * C;
    const float* p = wpe + t * C;
    const float* y = tte ? tte + static_cast<int64_t>(type_ids ? type_ids[i] : 0) * C : nullptr;
    float* o = out + i * C;
    if (y) {
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) o[c] = w[c] + p[c] + y[c];
    } else {
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) o[c] = w[c] + p[c];
    }
  }
}

void embedding_backward(float* dwte, float* dwpe, float* dtte, const float* dout, const int32_t* ids,
                        const int32_t* type_ids, int64_t B, int64_t T, int64_t C, const int32_t* pos_ids) {
  constexpr int64_t kCols = 32;
  const int64_t nblocks = (C + kCols - 1) / kCols;
#pragma omp parallel for schedule(static) if (B * T * C > 16384)
  for (int64_t blk = 0; blk < nblocks; ++blk) {
    const int64_t c0 = blk * kCols, c1 = c0 + kCols < C ? c0 + kCols : C;
    for (int64_t i = 0; i < B * T; ++i) {
      const float* d = dout + i * C;
      const int64_t t = pos_ids ? pos_ids[i] : i % T;
      if (dwte) {
        float* w = dwte + static_cast<int64_t>(ids[i]) * C;
#pragma omp simd
        for (int64_t c = c0; c < c1; ++c) w[c] += d[c];
      }
      if (dwpe) {
        float* p = dwpe + t * C;
#pragma omp simd
        for (int64_t c = c0; c < c1; ++c) p[c] += d[c];
      }
      if (dtte) {
        float* y = dtte + static_cast<int64_t>(type_ids ? type_ids[i] : 0) * C;
#pragma omp simd
        for (int64_t c = c0; c < c1; ++c) y[c] += d[c];
      }
    }
  }
}

}  // namespace ct::kernels

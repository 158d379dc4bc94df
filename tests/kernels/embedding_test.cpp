// Embeddings: gather-sum values, backward against a naive scatter and finite differences, thread invariance,
// bad ids.
#include "kernels/embedding.h"

#include <omp.h>

#include "core/error.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

constexpr int64_t B = 2, T = 5, C = 40, V = 7, P = 8, TV = 2;

TEST(Embedding, ForwardSumsThreeTables) {
  auto wte = test::randn(V * C, 1), wpe = test::randn(P * C, 2), tte = test::randn(TV * C, 3);
  std::vector<int32_t> ids{1, 6, 6, 0, 3, 2, 2, 5, 1, 1}, types{0, 0, 1, 1, 1, 0, 1, 0, 1, 0};
  std::vector<float> out(B * T * C), out2(B * T * C);
  embedding_forward(out.data(), ids.data(), types.data(), wte.data(), wpe.data(), tte.data(), B, T, C, V, P,
                    TV);
  embedding_forward(out2.data(), ids.data(), nullptr, wte.data(), wpe.data(), nullptr, B, T, C, V, P, 0);
  for (int64_t i = 0; i < B * T; ++i)
    for (int64_t c = 0; c < C; ++c) {
      EXPECT_FLOAT_EQ(out[i * C + c], wte[ids[i] * C + c] + wpe[(i % T) * C + c] + tte[types[i] * C + c]);
      EXPECT_FLOAT_EQ(out2[i * C + c], wte[ids[i] * C + c] + wpe[(i % T) * C + c]);
    }
}

// RoBERTa's position ids (pad rows at padding_idx, real tokens counted from padding_idx + 1) reach past T.
TEST(Embedding, GivenPositionIdsGatherAndScatterThoseRows) {
  auto wte = test::randn(V * C, 1), wpe = test::randn(P * C, 2), dout = test::randn(B * T * C, 5);
  std::vector<int32_t> ids{1, 6, 6, 0, 3, 2, 2, 5, 1, 1}, pos{2, 3, 4, 5, 6, 2, 3, 4, 1, 1};
  std::vector<float> out(B * T * C), dp(P * C, 0.0f), want_p(P * C, 0.0f);
  embedding_forward(out.data(), ids.data(), nullptr, wte.data(), wpe.data(), nullptr, B, T, C, V, P, 0,
                    pos.data());
  for (int64_t i = 0; i < B * T; ++i)
    for (int64_t c = 0; c < C; ++c) {
      EXPECT_FLOAT_EQ(out[i * C + c], wte[ids[i] * C + c] + wpe[pos[i] * C + c]);
      want_p[pos[i] * C + c] += dout[i * C + c];
    }
  embedding_backward(nullptr, dp.data(), nullptr, dout.data(), ids.data(), nullptr, B, T, C, pos.data());
  EXPECT_EQ(dp, want_p);
  pos[7] = static_cast<int32_t>(P);
  EXPECT_THROW(embedding_forward(out.data(), ids.data(), nullptr, wte.data(), wpe.data(), nullptr, B, T, C, V,
                                 P, 0, pos.data()),
               Error);
}

TEST(Embedding, BackwardScatterAddsDeterministically) {
  auto dout = test::randn(B * T * C, 4);
  std::vector<int32_t> ids{1, 6, 6, 0, 3, 6, 2, 5, 1, 6}, types{0, 0, 1, 1, 1, 0, 1, 0, 1, 0};
  std::vector<float> want_w(V * C, 1.0f), want_p(P * C, 1.0f), want_t(TV * C, 1.0f);
  for (int64_t i = 0; i < B * T; ++i)
    for (int64_t c = 0; c < C; ++c) {
      want_w[ids[i] * C + c] += dout[i * C + c];
      want_p[(i % T) * C + c] += dout[i * C + c];
      want_t[types[i] * C + c] += dout[i * C + c];
    }
  for (int threads : {1, 2, 3}) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<float> dw(V * C, 1.0f), dp(P * C, 1.0f), dt(TV * C, 1.0f);
    embedding_backward(dw.data(), dp.data(), dt.data(), dout.data(), ids.data(), types.data(), B, T, C);
    omp_set_num_threads(saved);
    EXPECT_EQ(dw, want_w);  // same order of additions as the naive loop: bit-equal
    EXPECT_EQ(dp, want_p);
    EXPECT_EQ(dt, want_t);
  }
}

TEST(Embedding, BadIdsAndLengthThrow) {
  std::vector<float> wte(V * C), wpe(P * C), tte(TV * C), out(B * T * C);
  std::vector<int32_t> ids(B * T, 1), types(B * T, 0);
  ids[7] = V;
  EXPECT_THROW(embedding_forward(out.data(), ids.data(), types.data(), wte.data(), wpe.data(), tte.data(), B,
                                 T, C, V, P, TV),
               Error);
  ids[7] = -1;
  EXPECT_THROW(embedding_forward(out.data(), ids.data(), types.data(), wte.data(), wpe.data(), tte.data(), B,
                                 T, C, V, P, TV),
               Error);
  ids[7] = 0;
  types[3] = 2;
  EXPECT_THROW(embedding_forward(out.data(), ids.data(), types.data(), wte.data(), wpe.data(), tte.data(), B,
                                 T, C, V, P, TV),
               Error);
  types[3] = 0;
  EXPECT_THROW(embedding_forward(out.data(), ids.data(), types.data(), wte.data(), wpe.data(), tte.data(), B,
                                 T, C, V, 4, TV),
               Error);
}

}  // namespace
}  // namespace ct::kernels

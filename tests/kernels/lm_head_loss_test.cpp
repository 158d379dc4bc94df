// The chunked LM head + cross-entropy against the double reference (sums, argmax, entropy, dh, dW), chunking
// that changes nothing but the order of sums, finite differences of its gradients, bf16 roundings, bad
// targets.
#include "kernels/lm_head_loss.h"

#include <cmath>
#include <vector>

#include "core/bf16.h"
#include "core/error.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

constexpr int64_t N = 37, C = 24, V = 300;

std::vector<int32_t> targets_of(int64_t n) {
  std::vector<int32_t> t(n);
  for (int64_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((i * 7919) % V);
  return t;
}

TEST(LmHeadLoss, MatchesTheReferenceInAnyChunking) {
  const std::vector<float> h = test::randn(N * C, 1), w = test::randn(V * C, 2, 0.3f);
  const std::vector<int32_t> t = targets_of(N);
  LmHeadLossSpec spec{N, C, V, DType::f32, 1.0f / 40.0f, 0};
  std::vector<float> rdh(N * C, 0.5f), rdw(V * C, 0.25f);
  const LmHeadLossSums ref =
      lm_head_loss_reference(h.data(), w.data(), t.data(), spec, rdh.data(), rdw.data());
  for (int64_t chunk : {0, 1, 5, 37}) {
    spec.chunk_rows = chunk;
    std::vector<float> dh(N * C, 0.5f), dw(V * C, 0.25f);
    std::vector<int32_t> arg(N, -1);
    const LmHeadLossSums got =
        lm_head_loss(h.data(), w.data(), t.data(), spec, dh.data(), dw.data(), arg.data());
    EXPECT_NEAR(got.nll, ref.nll, 1e-4 * std::fabs(ref.nll)) << chunk;
    EXPECT_NEAR(got.entropy, ref.entropy, 1e-4 * std::fabs(ref.entropy)) << chunk;
    EXPECT_EQ(got.correct, ref.correct) << chunk;
    test::expect_close(dh, rdh, 1e-6, 1e-4, "dh chunk " + std::to_string(chunk));
    test::expect_close(dw, rdw, 1e-6, 1e-4, "dw chunk " + std::to_string(chunk));
    // Evaluation: the same sums, nothing written.
    const LmHeadLossSums eval = lm_head_loss(h.data(), w.data(), t.data(), spec, nullptr, nullptr);
    EXPECT_EQ(eval.nll, got.nll);
  }
}

TEST(LmHeadLoss, ArgmaxAndCorrectCount) {
  // Row r's hidden state points at word r's weight row, so r is its argmax; targets hit every other row.
  const int64_t n = 6, c = 8, v = 8;
  std::vector<float> w(v * c, 0.0f), h(n * c, 0.0f);
  for (int64_t j = 0; j < v; ++j) w[j * c + j % c] = 1.0f + 0.1f * static_cast<float>(j);
  for (int64_t r = 0; r < n; ++r) h[r * c + r] = 3.0f;
  const std::vector<int32_t> t = {0, 5, 2, 5, 4, 5};
  std::vector<int32_t> arg(n);
  const LmHeadLossSums s =
      lm_head_loss(h.data(), w.data(), t.data(), {n, c, v}, nullptr, nullptr, arg.data());
  EXPECT_EQ(arg, (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(s.correct, 4);
}

TEST(LmHeadLoss, GradientsMatchFiniteDifferences) {
  const int64_t n = 4, c = 6, v = 11;
  std::vector<float> h = test::randn(n * c, 3), w = test::randn(v * c, 4);
  const std::vector<int32_t> t = {1, 10, 3, 3};
  const LmHeadLossSpec spec{n, c, v, DType::f32, 0.5f, 2};
  auto loss = [&]() { return 0.5 * lm_head_loss(h.data(), w.data(), t.data(), spec, nullptr, nullptr).nll; };
  std::vector<float> dh(n * c), dw(v * c);
  lm_head_loss(h.data(), w.data(), t.data(), spec, dh.data(), dw.data());
  test::expect_fd(loss, h.data(), dh.data(), n * c, 1e-2, 1e-3, 1e-2, "dh");
  test::expect_fd(loss, w.data(), dw.data(), v * c, 1e-2, 1e-3, 1e-2, "dw");
}

// bf16: the result of the f32 computation on bf16 operands with the logits rounded; gradients rounded.
TEST(LmHeadLoss, Bf16RoundsAsAutocast) {
  CT_SKIP_WITHOUT_BF16_MATMUL();
  auto rounded = [](std::vector<float> x) {
    for (float& e : x) e = round_bf16(e);
    return x;
  };
  const std::vector<float> h = rounded(test::randn(N * C, 5)), w = rounded(test::randn(V * C, 6, 0.3f));
  std::vector<bf16> hb(h.size()), wb(w.size());
  f32_to_bf16(h.data(), hb.data(), N * C);
  f32_to_bf16(w.data(), wb.data(), V * C);
  const std::vector<int32_t> t = targets_of(N);
  LmHeadLossSpec spec{N, C, V, DType::bf16, 1.0f / 37.0f, 8};
  std::vector<float> dh(N * C), dw(V * C), rdh(N * C), rdw(V * C);
  const LmHeadLossSums got = lm_head_loss(hb.data(), wb.data(), t.data(), spec, dh.data(), dw.data());
  spec.dt = DType::f32;
  const LmHeadLossSums ref =
      lm_head_loss_reference(h.data(), w.data(), t.data(), spec, rdh.data(), rdw.data());
  EXPECT_NEAR(got.nll, ref.nll, 1e-2 * std::fabs(ref.nll));
  for (float x : dh) EXPECT_EQ(x, round_bf16(x));
  for (float x : dw) EXPECT_EQ(x, round_bf16(x));
  test::expect_close(dh, rdh, 1e-4, 3e-2, "bf16 dh");
  test::expect_close(dw, rdw, 1e-4, 3e-2, "bf16 dw");
}

TEST(LmHeadLoss, TargetOutsideTheVocabularyIsAnError) {
  const std::vector<float> h(2 * 4, 1.0f), w(5 * 4, 1.0f);
  const std::vector<int32_t> t = {1, 5};
  try {
    lm_head_loss(h.data(), w.data(), t.data(), {2, 4, 5}, nullptr, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 1 has target 5"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ct::kernels

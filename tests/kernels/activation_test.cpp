// Activations: vectorized forward/backward vs double references, backward vs finite differences, names.
#include "kernels/activation.h"

#include <limits>

#include "core/error.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

std::vector<float> grid() {
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 0.0137f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-6f, -1e-6f, 50.0f, -50.0f, 1e4f, -1e4f}) x.push_back(v);
  return x;
}

class ActivationTest : public ::testing::TestWithParam<Activation> {};

TEST_P(ActivationTest, ForwardMatchesReference) {
  const Activation act = GetParam();
  auto x = grid();
  std::vector<float> y(x.size());
  std::vector<bf16> ybf(x.size());
  activation_forward(y.data(), ybf.data(), x.data(), static_cast<int64_t>(x.size()), act);
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = activation_reference(x[i], act);
    EXPECT_NEAR(y[i], want, 2e-7 + 2e-6 * std::fabs(want)) << "x=" << x[i];
    EXPECT_EQ(ybf[i].bits, to_bf16(y[i]).bits);
  }
}

// bf16 only (no f32 output): the same bits as the f32 result's bf16 copy, over chunk boundaries and the
// threaded path (n past 16384, not a multiple of the chunk).
TEST_P(ActivationTest, Bf16OnlyOutputEqualsTheF32ResultRounded) {
  const Activation act = GetParam();
  const int64_t n = 40000 + 17;
  auto x = test::randn(n, 9, 3.0f);
  std::vector<float> y(n);
  std::vector<bf16> with_f32(n), only(n);
  activation_forward(y.data(), with_f32.data(), x.data(), n, act);
  activation_forward(nullptr, only.data(), x.data(), n, act);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(only[i].bits, with_f32[i].bits) << i;
  EXPECT_THROW(activation_forward(nullptr, nullptr, x.data(), n, act), Error);
}

// A bf16 input (the bf16 path's pre-activation) gives what its f32 widening gives: exactly forward (f32 and
// bf16-only outputs), to the last bit backward (overwrite and accumulate, with the bf16 copy of the
// gradient).
TEST_P(ActivationTest, Bf16InputEqualsItsF32Widening) {
  const Activation act = GetParam();
  const int64_t n = 40000 + 17;
  auto x = test::randn(n, 13, 3.0f), dy = test::randn(n, 14);
  std::vector<bf16> xb(n);
  f32_to_bf16(x.data(), xb.data(), n);
  std::vector<float> xw(n);
  bf16_to_f32(xb.data(), xw.data(), n);
  std::vector<float> y(n), yw(n);
  std::vector<bf16> yb(n), ybw(n);
  activation_forward(y.data(), nullptr, xb.data(), n, act);
  activation_forward(yw.data(), nullptr, xw.data(), n, act);
  ASSERT_EQ(y, yw);
  activation_forward(nullptr, yb.data(), xb.data(), n, act);
  activation_forward(nullptr, ybw.data(), xw.data(), n, act);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(yb[i].bits, ybw[i].bits) << i;
  for (const bool acc : {false, true}) {
    std::vector<float> d(n, 0.5f), dw(n, 0.5f);
    std::vector<bf16> db(n), dbw(n);
    activation_backward(d.data(), dy.data(), xb.data(), n, act, acc, db.data());
    activation_backward(dw.data(), dy.data(), xw.data(), n, act, acc, dbw.data());
    // The vector loop's peeled head and scalar tail fall on other elements for another array alignment, and
    // their contractions can differ in the last bit.
    test::expect_close(d, dw, 1e-7, 1e-6, "backward, accumulate " + std::to_string(acc));
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(db[i].bits, to_bf16(d[i]).bits) << i;
  }
}

TEST_P(ActivationTest, BackwardMatchesReferenceAndFiniteDifferences) {
  const Activation act = GetParam();
  auto x = grid();
  const int64_t n = static_cast<int64_t>(x.size());
  auto dy = test::randn(n, 3);
  std::vector<float> dx(x.size(), 0.25f);
  activation_backward(dx.data(), dy.data(), x.data(), n, act);
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = 0.25 + dy[i] * activation_grad_reference(x[i], act);
    EXPECT_NEAR(dx[i], want, 1e-6 + 1e-5 * std::fabs(want)) << "x=" << x[i];
    // The double reference derivative against central differences of the double reference function.
    if (act == Activation::relu && std::fabs(x[i]) < 1e-3) continue;  // kink
    const double h = 1e-5;
    const double fd = (activation_reference(x[i] + h, act) - activation_reference(x[i] - h, act)) / (2 * h);
    EXPECT_NEAR(activation_grad_reference(x[i], act), fd, 1e-6) << "x=" << x[i];
  }
  // And the f32 kernel pair against each other: d/dx sum(act(x) * dy) by differences of activation_forward.
  std::vector<float> g(x.size(), 0.0f);
  activation_backward(g.data(), dy.data(), x.data(), n, act);
  auto loss = [&] {
    std::vector<float> y(x.size());
    activation_forward(y.data(), nullptr, x.data(), n, act);
    return test::dot(y, dy);
  };
  std::vector<float> xs(x.begin(), x.begin() + std::min<int64_t>(n, 1700));  // finite part of the grid
  test::expect_fd(loss, x.data(), g.data(), static_cast<int64_t>(xs.size()), 1e-2, 5e-3, 2e-2, "f32 fd", 200);
}

TEST_P(ActivationTest, OverwriteModeAndBf16CopyOfTheGradient) {
  const Activation act = GetParam();
  auto x = grid();
  const int64_t n = static_cast<int64_t>(x.size());
  auto dy = test::randn(n, 4);
  std::vector<float> added(x.size(), 0.0f), over(x.size(), std::numeric_limits<float>::quiet_NaN());
  std::vector<bf16> over_bf(x.size());
  activation_backward(added.data(), dy.data(), x.data(), n, act);
  activation_backward(over.data(), dy.data(), x.data(), n, act, false, over_bf.data());
  // NaN garbage is overwritten (equal up to how the compiler contracts the final multiply-add).
  for (int64_t i = 0; i < n; ++i)
    EXPECT_NEAR(added[i], over[i], 1e-6 + 1e-5 * std::fabs(added[i])) << "x=" << x[i];
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(over_bf[i].bits, to_bf16(over[i]).bits);
}

INSTANTIATE_TEST_SUITE_P(All, ActivationTest,
                         ::testing::Values(Activation::gelu, Activation::gelu_tanh, Activation::relu,
                                           Activation::tanh, Activation::silu));

TEST(Activation, NamesFollowHuggingFace) {
  EXPECT_EQ(activation_from_name("gelu"), Activation::gelu);
  EXPECT_EQ(activation_from_name("gelu_new"), Activation::gelu_tanh);
  EXPECT_EQ(activation_from_name("gelu_pytorch_tanh"), Activation::gelu_tanh);
  EXPECT_EQ(activation_from_name("relu"), Activation::relu);
  EXPECT_EQ(activation_from_name("silu"), Activation::silu);
  EXPECT_EQ(activation_from_name("swish"), Activation::silu);  // ACT2FN's alias
  EXPECT_THROW(activation_from_name("quick_gelu"), Error);
}

}  // namespace
}  // namespace ct::kernels

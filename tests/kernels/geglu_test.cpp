// GeGLU: forward vs double references, backward vs finite differences, over rows wider than a vector.
#include "kernels/geglu.h"

#include "core/error.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

class GegluTest : public ::testing::TestWithParam<Activation> {};

TEST_P(GegluTest, ForwardMatchesReference) {
  const Activation act = GetParam();
  // A small shape (one thread) and one past the threading threshold.
  for (auto [N, F] : {std::pair<int64_t, int64_t>{13, 37}, {700, 40}}) {
    auto x = test::randn(N * 2 * F, 4, 2.0f);
    std::vector<float> y(N * F), want(N * F);
    geglu_forward(y.data(), x.data(), N, F, act);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t f = 0; f < F; ++f)
        want[n * F + f] = static_cast<float>(activation_reference(x[n * 2 * F + f], act) *
                                             static_cast<double>(x[n * 2 * F + F + f]));
    test::expect_close(y, want, 1e-6, 1e-5, "geglu forward");
  }
}

TEST_P(GegluTest, BackwardMatchesFiniteDifferences) {
  const Activation act = GetParam();
  const int64_t N = 4, F = 19;
  auto x = test::randn(N * 2 * F, 5, 1.5f), w = test::randn(N * F, 6);
  auto loss = [&] {
    std::vector<float> y(N * F);
    geglu_forward(y.data(), x.data(), N, F, act);
    double s = 0;
    for (int64_t i = 0; i < N * F; ++i) s += static_cast<double>(w[i]) * y[i];
    return s;
  };
  std::vector<float> dx(N * 2 * F, 123.0f);  // overwritten
  geglu_backward(dx.data(), w.data(), x.data(), N, F, act);
  test::expect_fd(loss, x.data(), dx.data(), N * 2 * F, 1e-2, 2e-3, 2e-3, "d geglu / dx", 96);
}

TEST(Geglu, RefusesAnEmptyGate) {
  std::vector<float> x(4), y(4);
  EXPECT_THROW(geglu_forward(y.data(), x.data(), 2, 0, Activation::gelu), Error);
  EXPECT_THROW(geglu_backward(y.data(), x.data(), x.data(), 2, 0, Activation::gelu), Error);
}

INSTANTIATE_TEST_SUITE_P(Activations, GegluTest,
                         ::testing::Values(Activation::gelu, Activation::gelu_tanh, Activation::relu,
                                           Activation::silu));

}  // namespace
}  // namespace ct::kernels

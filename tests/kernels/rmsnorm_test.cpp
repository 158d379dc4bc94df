// RMSNorm (Llama's and Gemma's 1 + w) against the double reference and finite differences; dweight in the
// same bits at any thread count; a frozen weight gets no gradient.
#include "kernels/rmsnorm.h"

#include <omp.h>

#include <vector>

#include "test_util.h"

namespace ct::kernels {
namespace {

constexpr int64_t N = 70, C = 48;  // rows over three dweight blocks, the last partial

TEST(RmsNorm, ForwardAndBackwardMatchTheReference) {
  for (bool gemma : {false, true}) {
    const RmsNormSpec spec{1e-6f, gemma};
    std::vector<float> x = test::randn(N * C, 1), w = test::randn(C, 2, 0.5f), g = test::randn(N * C, 3);
    std::vector<float> out(N * C), ref(N * C), rstd(N);
    std::vector<bf16> out_bf16(N * C);
    rmsnorm_forward(out.data(), out_bf16.data(), rstd.data(), x.data(), w.data(), N, C, spec);
    rmsnorm_forward_reference(ref.data(), x.data(), w.data(), N, C, spec);
    test::expect_close(out, ref, 1e-6, 1e-5, gemma ? "gemma forward" : "llama forward");
    EXPECT_EQ(to_f32(out_bf16[5]), round_bf16(out[5]));
    std::vector<float> dx(N * C, 0.25f), dw(C, 0.5f), rdx = dx, rdw = dw;
    rmsnorm_backward(dx.data(), dw.data(), g.data(), x.data(), w.data(), rstd.data(), N, C, spec);
    rmsnorm_backward_reference(rdx.data(), rdw.data(), g.data(), x.data(), w.data(), N, C, spec);
    test::expect_close(dx, rdx, 1e-5, 1e-4, "dinp");
    test::expect_close(dw, rdw, 1e-4, 1e-4, "dweight");
  }
}

TEST(RmsNorm, BackwardMatchesFiniteDifferences) {
  for (bool gemma : {false, true}) {
    const RmsNormSpec spec{1e-5f, gemma};
    const int64_t n = 3, c = 8;
    std::vector<float> x = test::randn(n * c, 4), w = test::randn(c, 5, 0.5f), g = test::randn(n * c, 6);
    std::vector<float> out(n * c), rstd(n);
    auto loss = [&]() {
      rmsnorm_forward(out.data(), nullptr, rstd.data(), x.data(), w.data(), n, c, spec);
      return test::dot(out, g);
    };
    loss();
    std::vector<float> dx(n * c), dw(c);
    rmsnorm_backward(dx.data(), dw.data(), g.data(), x.data(), w.data(), rstd.data(), n, c, spec);
    test::expect_fd(loss, x.data(), dx.data(), n * c, 1e-2, 1e-3, 1e-2, "dinp");
    test::expect_fd(loss, w.data(), dw.data(), c, 1e-2, 1e-3, 1e-2, "dweight");
  }
}

TEST(RmsNorm, SameBitsAtAnyThreadCountAndFrozenWeight) {
  const int64_t n = 4096, c = 64;  // large enough to run in parallel
  std::vector<float> x = test::randn(n * c, 7), w = test::randn(c, 8), g = test::randn(n * c, 9);
  std::vector<float> out(n * c), rstd(n);
  rmsnorm_forward(out.data(), nullptr, rstd.data(), x.data(), w.data(), n, c, {});
  auto run = [&](int threads) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<float> dx(n * c), dw(c);
    rmsnorm_backward(dx.data(), dw.data(), g.data(), x.data(), w.data(), rstd.data(), n, c, {});
    omp_set_num_threads(before);
    dx.insert(dx.end(), dw.begin(), dw.end());
    return dx;
  };
  const std::vector<float> one = run(1);
  EXPECT_EQ(one, run(3));
  std::vector<float> dx(n * c);
  rmsnorm_backward(dx.data(), nullptr, g.data(), x.data(), w.data(), rstd.data(), n, c, {});
  EXPECT_EQ(std::vector<float>(one.begin(), one.begin() + n * c), dx);
}

}  // namespace
}  // namespace ct::kernels

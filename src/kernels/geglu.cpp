#include "kernels/geglu.h"

#include <vector>

#include "core/error.h"

namespace ct::kernels {

void geglu_forward(float* out, const float* inp, int64_t N, int64_t F, Activation act) {
  CT_CHECK(N >= 0 && F > 0, "geglu: shape [", N, ", ", 2 * F, "] (expected F > 0)");
#pragma omp parallel if (N * F > 16384)
  {
    std::vector<float> a(static_cast<size_t>(F));
#pragma omp for schedule(static)
    for (int64_t n = 0; n < N; ++n) {
      const float* x = inp + n * 2 * F;
      // The activation's own vectorized kernel (the same values as the ungated FFN's), then the gate.
      activation_forward(a.data(), nullptr, x, F, act);
      float* y = out + n * F;
#pragma omp simd
      for (int64_t f = 0; f < F; ++f) y[f] = a[f] * x[F + f];
    }
  }
}

void geglu_backward(float* dinp, const float* dout, const float* inp, int64_t N, int64_t F, Activation act) {
  CT_CHECK(N >= 0 && F > 0, "geglu: shape [", N, ", ", 2 * F, "] (expected F > 0)");
#pragma omp parallel if (N * F > 16384)
  {
    std::vector<float> a(static_cast<size_t>(F)), dgated(static_cast<size_t>(F));
#pragma omp for schedule(static)
    for (int64_t n = 0; n < N; ++n) {
      const float* x = inp + n * 2 * F;
      const float* dy = dout + n * F;
      float* dx = dinp + n * 2 * F;
      activation_forward(a.data(), nullptr, x, F, act);
#pragma omp simd
      for (int64_t f = 0; f < F; ++f) {
        dgated[f] = dy[f] * x[F + f];
        dx[F + f] = dy[f] * a[f];
      }
      activation_backward(dx, dgated.data(), x, F, act, /*accumulate=*/false);
    }
  }
}

}  // namespace ct::kernels

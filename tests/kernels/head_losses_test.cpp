// The heads' losses beyond cross-entropy: MSE (regression) and BCE with logits (multi-label), each against
// its double reference and its backward against finite differences of the forward.
#include <cmath>

#include "kernels/bce_with_logits.h"
#include "kernels/mse_loss.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

TEST(MseLoss, MatchesReferenceAndFiniteDifferences) {
  const int64_t n = 7;
  auto pred = test::randn(n, 11, 1.5f);
  auto target = test::randn(n, 12, 1.5f);
  EXPECT_NEAR(mse_loss_forward(pred.data(), target.data(), n),
              mse_loss_reference(pred.data(), target.data(), n), 1e-6);
  std::vector<float> d(n, 0.25f);
  mse_loss_backward(d.data(), pred.data(), target.data(), n, 0.5f);
  for (auto& v : d) v -= 0.25f;  // ADDS
  auto f = [&] { return 0.5 * mse_loss_forward(pred.data(), target.data(), n); };
  test::expect_fd(f, pred.data(), d.data(), n, 1e-2, 1e-4, 1e-3, "dpred");
}

TEST(BceWithLogits, MatchesReferenceAndFiniteDifferences) {
  const int64_t n = 12;
  auto logits = test::randn(n, 13, 2.0f);
  std::vector<float> target(n);
  for (int64_t i = 0; i < n; ++i) target[i] = (i % 3 == 0) ? 1.0f : (i % 3 == 1 ? 0.0f : 0.25f);
  EXPECT_NEAR(bce_with_logits_forward(logits.data(), target.data(), n),
              bce_with_logits_reference(logits.data(), target.data(), n), 1e-6);
  std::vector<float> d(n, 0.0f);
  bce_with_logits_backward(d.data(), logits.data(), target.data(), n, 2.0f);
  auto f = [&] { return 2.0 * bce_with_logits_forward(logits.data(), target.data(), n); };
  test::expect_fd(f, logits.data(), d.data(), n, 1e-2, 1e-4, 1e-3, "dlogits");
}

TEST(BceWithLogits, LargeLogitsStayFinite) {
  const float x[2] = {200.0f, -200.0f}, y[2] = {0.0f, 1.0f};
  const float loss = bce_with_logits_forward(x, y, 2);
  EXPECT_NEAR(loss, 200.0f, 1e-3);  // torch: max(x,0) - x y + log1p(exp(-|x|)), no overflow
  float d[2] = {0.0f, 0.0f};
  bce_with_logits_backward(d, x, y, 2, 1.0f);
  EXPECT_NEAR(d[0], 0.5f, 1e-6);
  EXPECT_NEAR(d[1], -0.5f, 1e-6);
}

}  // namespace
}  // namespace ct::kernels

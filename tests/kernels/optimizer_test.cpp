// AdamW / SGD: values produced by torch 1.13 (torch.optim.AdamW / SGD, two param groups with and without
// weight decay, three steps), the scalar references, and range handling.
#include "kernels/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/grad_norm.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

const std::vector<float> kP0{0.5f, -1.25f, 2.0f, 0.0f, 3.0f, -0.75f};
const std::vector<std::vector<float>> kGrads{{0.1f, -0.2f, 0.3f, 0.05f, -1.0f, 0.0f},
                                             {-0.3f, 0.25f, 0.1f, 0.0f, 2.0f, 0.5f},
                                             {0.2f, 0.2f, -0.4f, 1.0f, 0.0f, -0.1f}};
const std::vector<SlabRange> kRanges{{0, 3, true}, {3, 3, false}};

TEST(AdamW, MatchesTorchOverThreeSteps) {
  // torch: AdamW([{a, wd 0.1}, {b, wd 0}], lr=0.05, betas=(0.9, 0.999), eps=1e-8)
  std::vector<float> p = kP0, m(6), v(6);
  AdamWHyper h{0.05, 0.9, 0.999, 1e-8, 0.1};
  for (int s = 0; s < 3; ++s) adamw_step(p.data(), kGrads[s].data(), m.data(), v.data(), kRanges, h, s + 1);
  // Bit-exact: the same float operations in the same order as torch's single-tensor AdamW.
  EXPECT_EQ(p, (std::vector<float>{0.4666827619075775f, -1.212202787399292f, 1.8815115690231323f,
                                   -0.11669578403234482f, 3.017544984817505f, -0.8091416358947754f}));
  test::expect_close(m,
                     {0.0010999991791322827f, 0.02630000002682209f, -0.0066999997943639755f,
                      0.10405000299215317f, 0.0990000069141388f, 0.034999996423721313f},
                     1e-7, 1e-5, "exp_avg");
  test::expect_close(v,
                     {0.00013989002036396414f, 0.00014235754497349262f, 0.0002598101273179054f,
                      0.0010024950606748462f, 0.004994001239538193f, 0.0002597499988041818f},
                     1e-9, 1e-5, "exp_avg_sq");
}

TEST(AdamW, VectorizedMatchesReferenceOnALargeSlab) {
  const int64_t n = 200003;  // above the parallel threshold, odd tail
  auto p = test::randn(n, 1), g = test::randn(n, 2);
  std::vector<float> m(n), v(n), pr = p, mr(n), vr(n);
  AdamWHyper h{3e-5, 0.9, 0.999, 1e-8, 0.01};
  for (int s = 1; s <= 3; ++s) {
    adamw_update(p.data(), g.data(), m.data(), v.data(), n, h, s, true);
    adamw_update_reference(pr.data(), g.data(), mr.data(), vr.data(), n, h, s, true);
  }
  test::expect_close(p, pr, 1e-7, 1e-6, "param");
  test::expect_close(m, mr, 1e-7, 1e-5, "exp_avg");
  test::expect_close(v, vr, 1e-9, 1e-5, "exp_avg_sq");
}

TEST(Sgd, MatchesTorchWithMomentumOverThreeSteps) {
  // torch: SGD([{a, wd 0.1}, {b, wd 0}], lr=0.05, momentum=0.9)
  std::vector<float> p = kP0, buf(6, 123.0f);  // garbage: step 1 must initialize the buffer
  SgdHyper h{0.05, 0.9, 0.1};
  for (int s = 0; s < 3; ++s) sgd_step(p.data(), kGrads[s].data(), buf.data(), kRanges, h, s + 1);
  EXPECT_EQ(p, (std::vector<float>{0.4910048246383667f, -1.2218645811080933f, 1.9142993688583374f,
                                   -0.05677500367164612f, 2.945499897003174f, -0.7924999594688416f}));
}

TEST(Sgd, PlainMatchesReference) {
  auto p = test::randn(1000, 3), g = test::randn(1000, 4);
  std::vector<float> pr = p;
  SgdHyper h{0.1, 0.0, 0.01};
  sgd_update(p.data(), g.data(), nullptr, 1000, h, 1, true);
  sgd_update_reference(pr.data(), g.data(), nullptr, 1000, h, 1, true);
  test::expect_close(p, pr, 1e-7, 1e-6, "param");
}

// The bf16 weight copies written by the update: the parameters and moments are those of the plain update, and
// every copy (across ranges, over the threaded path) is exactly bf16 of its new parameter; elements in no
// range keep their copy.
TEST(Optimizer, Bf16CopiesWrittenInTheSamePassEqualTheNewParametersRounded) {
  const int64_t n = 200003;
  const std::vector<SlabRange> ranges{{0, 100000, true}, {100000, 99000, false}, {199500, 503, true}};
  auto p0 = test::randn(n, 11), g = test::randn(n, 12);
  for (const bool adam : {true, false}) {
    std::vector<float> p = p0, m(n), v(n), pr = p0, mr(n), vr(n);
    std::vector<bf16> copy(n, bf16{0x7777});
    for (int s = 1; s <= 2; ++s) {
      if (adam) {
        AdamWHyper h{3e-3, 0.9, 0.999, 1e-8, 0.01};
        adamw_step(p.data(), g.data(), m.data(), v.data(), ranges, h, s, copy.data());
        adamw_step(pr.data(), g.data(), mr.data(), vr.data(), ranges, h, s);
      } else {
        SgdHyper h{0.1, 0.9, 0.01};
        sgd_step(p.data(), g.data(), m.data(), ranges, h, s, copy.data());
        sgd_step(pr.data(), g.data(), mr.data(), ranges, h, s);
      }
    }
    ASSERT_EQ(p, pr) << (adam ? "adamw" : "sgd");
    ASSERT_EQ(m, mr) << (adam ? "adamw" : "sgd");
    for (int64_t i = 0; i < n; ++i) {
      const bool in_range = i < 199000 || i >= 199500;
      ASSERT_EQ(copy[i].bits, in_range ? to_bf16(p[i]).bits : uint16_t{0x7777}) << i;
    }
  }
}

TEST(Optimizer, StepOverManyRangesEqualsPerRangeUpdates) {
  // Adjacent ranges with equal decay are merged internally; gaps and flag changes must be respected.
  std::vector<SlabRange> ranges{{0, 5, true},  {5, 7, true},   {12, 3, false}, {15, 4, false},
                                {22, 6, true}, {28, 2, false}, {30, 10, true}};
  const int64_t n = 40;
  auto p0 = test::randn(n, 7), g = test::randn(n, 8);
  std::vector<float> p = p0, m(n), v(n), pr = p0, mr(n), vr(n);
  AdamWHyper h{0.01, 0.9, 0.999, 1e-8, 0.5};
  adamw_step(p.data(), g.data(), m.data(), v.data(), ranges, h, 1);
  for (const auto& r : ranges)
    adamw_update(pr.data() + r.offset, g.data() + r.offset, mr.data() + r.offset, vr.data() + r.offset,
                 r.numel, h, 1, r.decay);
  EXPECT_EQ(p, pr);  // elements 19..21 are in no range: untouched on both sides
  EXPECT_EQ(p[20], p0[20]);
  std::vector<float> q = p0, buf(n), qr = p0, bufr(n);
  SgdHyper s{0.1, 0.9, 0.3};
  sgd_step(q.data(), g.data(), buf.data(), ranges, s, 1);
  for (const auto& r : ranges)
    sgd_update(qr.data() + r.offset, g.data() + r.offset, bufr.data() + r.offset, r.numel, s, 1, r.decay);
  EXPECT_EQ(q, qr);
}

// The word embeddings' case: a [rows, width] tensor inside the slab where each step's gradient lives in a
// few rows, and rows join the touched set over the steps. AdamW told which rows were ever touched gives
// every parameter, moment and bf16 copy the dense update's bits, with and without weight decay.
TEST(Optimizer, UntouchedRowsGetTheDenseUpdateBitForBit) {
  const int64_t off = 1001, rows = 500, width = 24, n = off + rows * width + 333;
  const std::vector<SlabRange> ranges{
      {0, off, false}, {off, rows * width, true}, {off + rows * width, 333, false}};
  const auto p0 = test::randn(n, 21, 0.02f);
  for (const double wd : {0.01, 0.0}) {
    std::vector<float> p = p0, m(n), v(n), pd = p0, md(n), vd(n);
    std::vector<bf16> copy(n), copyd(n);
    f32_to_bf16(p0.data(), copy.data(), n);  // current copies, as after a forward
    f32_to_bf16(p0.data(), copyd.data(), n);
    std::vector<uint8_t> touched(rows, 0);
    const std::vector<std::vector<int64_t>> step_rows{{3, 4, 250}, {4, 499}, {}, {0, 3, 17}, {250}};
    for (size_t s = 0; s < step_rows.size(); ++s) {
      std::vector<float> g = test::randn(n, 100 + s);
      std::fill(g.begin() + off, g.begin() + off + rows * width, 0.0f);
      for (int64_t r : step_rows[s]) {
        const auto rg = test::randn(width, 200 + s * 7 + r);
        std::copy(rg.begin(), rg.end(), g.begin() + off + r * width);
        touched[static_cast<size_t>(r)] = 1;
      }
      AdamWHyper h{1e-2 / static_cast<double>(s + 1), 0.9, 0.999, 1e-8, wd};
      adamw_step(p.data(), g.data(), m.data(), v.data(), ranges, h, static_cast<int64_t>(s + 1), copy.data(),
                 RowFlags{off, rows, width, touched.data()});
      adamw_step(pd.data(), g.data(), md.data(), vd.data(), ranges, h, static_cast<int64_t>(s + 1),
                 copyd.data());
    }
    auto same = [](const auto& a, const auto& b) {
      return std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
    };
    EXPECT_TRUE(same(p, pd)) << wd;
    EXPECT_TRUE(same(m, md)) << wd;
    EXPECT_TRUE(same(v, vd)) << wd;
    EXPECT_TRUE(same(copy, copyd)) << wd;
    const size_t never = static_cast<size_t>(off + 100 * width);  // row 100: decayed only, or left alone
    if (wd > 0)
      EXPECT_NE(p[never], p0[never]);
    else
      EXPECT_EQ(p[never], p0[never]);
  }
}

// Clipping folded into the update: AdamW reading grad * clip_coefficient gives the bits of scaling the
// gradients in place first (clip_grad_norm) and updating with them, on a slab with untouched rows, over
// steps that clip and steps that do not.
TEST(Optimizer, ClipCoefficientAppliedInThePassEqualsClippingInPlace) {
  const int64_t off = 777, rows = 300, width = 16, n = off + rows * width + 4099;
  const std::vector<SlabRange> ranges{
      {0, off, true}, {off, rows * width, true}, {off + rows * width, 4099, false}};
  std::vector<float> p = test::randn(n, 5, 0.02f), m(n), v(n), pc = p, mc(n), vc(n);
  std::vector<bf16> copy(n), copyc(n);
  std::vector<uint8_t> touched(rows, 0), live(rows, 0);
  int clipped = 0;
  for (int s = 0; s < 4; ++s) {
    std::vector<float> g = test::randn(n, 50 + s, s == 2 ? 1e-4f : 1.0f);  // step 2: norm < 1, no clipping
    std::fill(g.begin() + off, g.begin() + off + rows * width, 0.0f);
    std::fill(live.begin(), live.end(), 0);
    for (int64_t r : {int64_t{7} * s, int64_t{150} + s}) {
      const auto rg = test::randn(width, 90 + s * 3 + r, s == 2 ? 1e-4f : 1.0f);
      std::copy(rg.begin(), rg.end(), g.begin() + off + r * width);
      touched[static_cast<size_t>(r)] = live[static_cast<size_t>(r)] = 1;
    }
    const RowFlags lf{off, rows, width, live.data()}, tf{off, rows, width, touched.data()};
    const AdamWHyper h{1e-3, 0.9, 0.999, 1e-8, 0.01};
    std::vector<float> gc = g;
    const float coef = clip_coefficient(grad_norm(g.data(), n, lf), 1.0);
    clipped += coef < 1.0f;
    EXPECT_EQ(clip_grad_norm(gc.data(), n, 1.0, lf), grad_norm(g.data(), n, lf));
    adamw_step(p.data(), g.data(), m.data(), v.data(), ranges, h, s + 1, copy.data(), tf, coef);
    adamw_step(pc.data(), gc.data(), mc.data(), vc.data(), ranges, h, s + 1, copyc.data(), tf);
  }
  EXPECT_EQ(clipped, 3);
  auto same = [](const auto& a, const auto& b) {
    return std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
  };
  EXPECT_TRUE(same(p, pc));
  EXPECT_TRUE(same(m, mc));
  EXPECT_TRUE(same(v, vc));
  EXPECT_TRUE(same(copy, copyc));
}

TEST(Optimizer, BadArgumentsThrow) {
  std::vector<float> p(4), g(4), m(4), v(4);
  EXPECT_THROW(adamw_update(p.data(), g.data(), m.data(), v.data(), 4, AdamWHyper{}, 0, true), Error);
  EXPECT_THROW(
      adamw_step(p.data(), g.data(), m.data(), v.data(), {{0, 4, true}}, AdamWHyper{}, 1, nullptr, {}, NAN),
      Error);
  EXPECT_THROW(sgd_update(p.data(), g.data(), nullptr, 4, SgdHyper{0.1, 0.9, 0.0}, 1, true), Error);
}

}  // namespace
}  // namespace ct::kernels

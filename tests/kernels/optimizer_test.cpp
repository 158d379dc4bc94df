// AdamW / SGD: values produced by torch 1.13 (torch.optim.AdamW / SGD, two param groups with and without
// weight decay, three steps), the scalar references, and range handling.
#include "kernels/optimizer.h"

#include "core/error.h"
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

TEST(Optimizer, BadArgumentsThrow) {
  std::vector<float> p(4), g(4), m(4), v(4);
  EXPECT_THROW(adamw_update(p.data(), g.data(), m.data(), v.data(), 4, AdamWHyper{}, 0, true), Error);
  EXPECT_THROW(sgd_update(p.data(), g.data(), nullptr, 4, SgdHyper{0.1, 0.9, 0.0}, 1, true), Error);
}

}  // namespace
}  // namespace ct::kernels

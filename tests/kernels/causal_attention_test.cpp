// Flash-style causal attention against the dense double reference: padded and packed spans of several tiles
// with partial last tiles, MHA / GQA / MQA, sliding windows, strided rows, bf16 operands; backward against
// the reference and finite differences; the same bits at any thread count; rows outside the spans untouched.
#include "kernels/causal_attention.h"

#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/bf16.h"
#include "core/error.h"
#include "test_util.h"

namespace ct::kernels {
namespace {

struct Case {
  std::string name;
  int64_t NH, NKV, HS, window;
  std::vector<int64_t> start, len;
  int64_t rows;          // rows of the buffers (spans may leave some out)
  int64_t pad_cols = 0;  // extra columns per row: strided rows, as slices of a fused QKV buffer
};

std::vector<Case> cases() {
  return {
      // Two padded sequences of 130 rows (three 64-row tiles, the last partial), the second 70 long.
      {"padded_gqa", 4, 2, 16, 0, {0, 130}, {130, 70}, 260},
      {"packed_mqa_window", 4, 1, 8, 50, {0, 70, 200}, {70, 130, 3}, 203},
      {"packed_mha_window_1", 2, 2, 8, 1, {0, 5}, {5, 90}, 95},
      {"strided_gqa_window", 6, 2, 8, 64, {0}, {150}, 150, 8},
  };
}

CausalAttentionDims dims(const Case& c) {
  CausalAttentionDims d;
  d.n_seqs = static_cast<int64_t>(c.start.size());
  d.NH = c.NH;
  d.NKV = c.NKV;
  d.HS = c.HS;
  d.ld_q = c.NH * c.HS + c.pad_cols;
  d.ld_kv = c.NKV * c.HS + c.pad_cols;
  d.window = c.window;
  return d;
}

struct Buffers {
  std::vector<float> q, k, v, dout;
  explicit Buffers(const Case& c, const CausalAttentionDims& d)
      : q(test::randn(c.rows * d.ld_q, 11)),
        k(test::randn(c.rows * d.ld_kv, 12)),
        v(test::randn(c.rows * d.ld_kv, 13)),
        dout(test::randn(c.rows * d.ld_q, 14)) {}
};

// Elements of the spans' rows, head columns only (what the kernels write).
std::vector<float> span_elems(const std::vector<float>& x, const Case& c, int64_t ld, int64_t cols) {
  std::vector<float> out;
  for (size_t s = 0; s < c.start.size(); ++s)
    for (int64_t r = c.start[s]; r < c.start[s] + c.len[s]; ++r)
      for (int64_t e = 0; e < cols; ++e) out.push_back(x[r * ld + e]);
  return out;
}

TEST(CausalAttention, ForwardAndBackwardMatchTheReference) {
  for (const Case& c : cases()) {
    const CausalAttentionDims d = dims(c);
    Buffers b(c, d);
    const int64_t qc = c.NH * c.HS, kc = c.NKV * c.HS;
    std::vector<float> out(c.rows * d.ld_q, 7.0f), ref(c.rows * d.ld_q, 0.0f), lse(c.rows * c.NH, 0.0f);
    causal_attention_forward(out.data(), lse.data(), b.q.data(), b.k.data(), b.v.data(), c.start.data(),
                             c.len.data(), d, DType::f32);
    causal_attention_forward_reference(ref.data(), b.q.data(), b.k.data(), b.v.data(), c.start.data(),
                                       c.len.data(), d);
    test::expect_close(span_elems(out, c, d.ld_q, qc), span_elems(ref, c, d.ld_q, qc), 2e-5, 2e-4,
                       c.name + " forward");
    // Padding columns and rows outside every span keep what was there.
    if (c.pad_cols) EXPECT_EQ(out[qc], 7.0f) << c.name;

    std::vector<float> dq(c.rows * d.ld_q, 0.5f), dk(c.rows * d.ld_kv, 0.5f), dv(c.rows * d.ld_kv, 0.5f);
    std::vector<float> rq = dq, rk = dk, rv = dv;
    causal_attention_backward(dq.data(), dk.data(), dv.data(), b.dout.data(), b.q.data(), b.k.data(),
                              b.v.data(), out.data(), lse.data(), c.start.data(), c.len.data(), d,
                              DType::f32);
    causal_attention_backward_reference(rq.data(), rk.data(), rv.data(), b.dout.data(), b.q.data(),
                                        b.k.data(), b.v.data(), c.start.data(), c.len.data(), d);
    test::expect_close(span_elems(dq, c, d.ld_q, qc), span_elems(rq, c, d.ld_q, qc), 5e-5, 5e-4,
                       c.name + " dq");
    test::expect_close(span_elems(dk, c, d.ld_kv, kc), span_elems(rk, c, d.ld_kv, kc), 5e-5, 5e-4,
                       c.name + " dk");
    test::expect_close(span_elems(dv, c, d.ld_kv, kc), span_elems(rv, c, d.ld_kv, kc), 5e-5, 5e-4,
                       c.name + " dv");
  }
}

// The reference itself against finite differences of its forward (double sums, f32 storage), and the kernel's
// gradient against those of the kernel's own forward.
TEST(CausalAttention, BackwardMatchesFiniteDifferences) {
  Case c{"fd", 4, 2, 4, 3, {0, 9}, {9, 7}, 16};
  const CausalAttentionDims d = dims(c);
  Buffers b(c, d);
  std::vector<float> out(c.rows * d.ld_q), lse(c.rows * c.NH);
  auto loss = [&]() {
    causal_attention_forward(out.data(), lse.data(), b.q.data(), b.k.data(), b.v.data(), c.start.data(),
                             c.len.data(), d, DType::f32);
    return test::dot(out, b.dout);
  };
  loss();
  std::vector<float> dq(b.q.size()), dk(b.k.size()), dv(b.v.size());
  causal_attention_backward(dq.data(), dk.data(), dv.data(), b.dout.data(), b.q.data(), b.k.data(),
                            b.v.data(), out.data(), lse.data(), c.start.data(), c.len.data(), d, DType::f32);
  test::expect_fd(loss, b.q.data(), dq.data(), static_cast<int64_t>(b.q.size()), 1e-2, 2e-3, 2e-2, "dq");
  test::expect_fd(loss, b.k.data(), dk.data(), static_cast<int64_t>(b.k.size()), 1e-2, 2e-3, 2e-2, "dk");
  test::expect_fd(loss, b.v.data(), dv.data(), static_cast<int64_t>(b.v.size()), 1e-2, 2e-3, 2e-2, "dv");

  std::vector<float> ref(out.size());
  auto ref_loss = [&]() {
    causal_attention_forward_reference(ref.data(), b.q.data(), b.k.data(), b.v.data(), c.start.data(),
                                       c.len.data(), d);
    return test::dot(ref, b.dout);
  };
  std::vector<float> rq(b.q.size()), rk(b.k.size()), rv(b.v.size());
  causal_attention_backward_reference(rq.data(), rk.data(), rv.data(), b.dout.data(), b.q.data(), b.k.data(),
                                      b.v.data(), c.start.data(), c.len.data(), d);
  test::expect_fd(ref_loss, b.q.data(), rq.data(), static_cast<int64_t>(b.q.size()), 1e-2, 2e-3, 2e-2,
                  "ref dq");
  test::expect_fd(ref_loss, b.k.data(), rk.data(), static_cast<int64_t>(b.k.size()), 1e-2, 2e-3, 2e-2,
                  "ref dk");
  test::expect_fd(ref_loss, b.v.data(), rv.data(), static_cast<int64_t>(b.v.size()), 1e-2, 2e-3, 2e-2,
                  "ref dv");
}

// A packed sequence equals the same sequence alone: nothing crosses a span's edge.
TEST(CausalAttention, PackedSequencesDoNotSeeEachOther) {
  Case c{"pair", 2, 1, 8, 0, {0, 40}, {40, 100}, 140};
  const CausalAttentionDims d = dims(c);
  Buffers b(c, d);
  std::vector<float> out(c.rows * d.ld_q), lse(c.rows * c.NH);
  causal_attention_forward(out.data(), lse.data(), b.q.data(), b.k.data(), b.v.data(), c.start.data(),
                           c.len.data(), d, DType::f32);
  CausalAttentionDims one = d;
  one.n_seqs = 1;
  const int64_t s0 = 0, l1 = 100, off = 40;
  std::vector<float> alone(100 * d.ld_q), lse1(100 * c.NH);
  causal_attention_forward(alone.data(), lse1.data(), b.q.data() + off * d.ld_q, b.k.data() + off * d.ld_kv,
                           b.v.data() + off * d.ld_kv, &s0, &l1, one, DType::f32);
  for (int64_t i = 0; i < 100 * d.ld_q; ++i) ASSERT_EQ(out[off * d.ld_q + i], alone[i]) << i;
}

TEST(CausalAttention, SameBitsAtAnyThreadCount) {
  const Case c = cases()[0];
  const CausalAttentionDims d = dims(c);
  Buffers b(c, d);
  auto run = [&](int threads) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<float> out(c.rows * d.ld_q), lse(c.rows * c.NH), dq(b.q.size()), dk(b.k.size()),
        dv(b.v.size());
    causal_attention_forward(out.data(), lse.data(), b.q.data(), b.k.data(), b.v.data(), c.start.data(),
                             c.len.data(), d, DType::f32);
    causal_attention_backward(dq.data(), dk.data(), dv.data(), b.dout.data(), b.q.data(), b.k.data(),
                              b.v.data(), out.data(), lse.data(), c.start.data(), c.len.data(), d,
                              DType::f32);
    omp_set_num_threads(before);
    out.insert(out.end(), dq.begin(), dq.end());
    out.insert(out.end(), dk.begin(), dk.end());
    out.insert(out.end(), dv.begin(), dv.end());
    return out;
  };
  EXPECT_EQ(run(1), run(3));
}

// bf16 operands are widened: the result is the f32 computation on the rounded values, rounded once.
TEST(CausalAttention, Bf16OperandsAsTheirRoundedValues) {
  const Case c = cases()[1];
  const CausalAttentionDims d = dims(c);
  Buffers b(c, d);
  auto rounded = [](std::vector<float> x) {
    for (float& e : x) e = round_bf16(e);
    return x;
  };
  const std::vector<float> q = rounded(b.q), k = rounded(b.k), v = rounded(b.v);
  std::vector<bf16> qh(q.size()), kh(k.size()), vh(v.size()), outh(q.size());
  f32_to_bf16(q.data(), qh.data(), static_cast<int64_t>(q.size()));
  f32_to_bf16(k.data(), kh.data(), static_cast<int64_t>(k.size()));
  f32_to_bf16(v.data(), vh.data(), static_cast<int64_t>(v.size()));
  std::vector<float> lse(c.rows * c.NH), ref(q.size());
  causal_attention_forward(outh.data(), lse.data(), qh.data(), kh.data(), vh.data(), c.start.data(),
                           c.len.data(), d, DType::bf16);
  causal_attention_forward_reference(ref.data(), q.data(), k.data(), v.data(), c.start.data(), c.len.data(),
                                     d);
  std::vector<float> out(q.size());
  bf16_to_f32(outh.data(), out.data(), static_cast<int64_t>(out.size()));
  const int64_t qc = c.NH * c.HS;
  test::expect_close(span_elems(out, c, d.ld_q, qc), rounded(span_elems(ref, c, d.ld_q, qc)), 1e-3, 8e-3,
                     "bf16 forward");
}

TEST(CausalAttention, BadShapesAreErrors) {
  CausalAttentionDims d;
  d.n_seqs = 1;
  d.NH = 3;
  d.NKV = 2;
  d.HS = 4;
  const int64_t s = 0, l = 1;
  float x[12] = {}, lse[3] = {};
  EXPECT_THROW(causal_attention_forward(x, lse, x, x, x, &s, &l, d, DType::f32), Error);
}

}  // namespace
}  // namespace ct::kernels

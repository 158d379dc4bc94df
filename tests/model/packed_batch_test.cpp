// Packed (unpadded) batches: the golden models' real tokens laid end to end give PyTorch's logits, and the
// loss and every gradient of PyTorch's loss with the pads masked out of it (make_golden.py's packed.*); in
// train mode (dropout everywhere, attention probabilities included) real-token logits equal the padded
// computation's; a feature's logits do not depend on its batch-mates; bad packed batches fail with one line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "golden_util.h"
#include "kernels/cpu_features.h"
#include "kernels/optimizer.h"
#include "qa_model.h"

namespace ct::model {
namespace {

// The golden batch without its padding (right-padded rows: length = attended positions).
struct Packed {
  std::vector<int32_t> ids, types, lens, start, end;
  std::vector<int64_t> padded_index;  // token k of the packed batch is element padded_index[k] of [B, T]
  Batch batch;
};

Packed pack(const Golden& g, const std::vector<int64_t>& rows) {
  Packed p;
  for (int64_t b : rows) {
    int32_t len = 0;
    for (int64_t t = 0; t < g.T; ++t) len += g.mask[b * g.T + t];
    for (int64_t t = 0; t < len; ++t) {
      p.ids.push_back(g.ids[b * g.T + t]);
      p.types.push_back(g.types[b * g.T + t]);
      p.padded_index.push_back(b * g.T + t);
    }
    p.lens.push_back(len);
    p.start.push_back(g.start[b]);
    p.end.push_back(g.end[b]);
  }
  p.batch.B = static_cast<int64_t>(rows.size());
  p.batch.T = g.T;
  p.batch.seq_lens = p.lens.data();
  p.batch.input_ids = p.ids.data();
  p.batch.token_type_ids = p.types.data();
  p.batch.start_positions = p.start.data();
  p.batch.end_positions = p.end.data();
  return p;
}

std::vector<int64_t> all_rows(const Golden& g) {
  std::vector<int64_t> r;
  for (int64_t b = 0; b < g.B; ++b) r.push_back(b);
  return r;
}

TEST(PackedBatch, GoldenLogitsLossAndGradientsOfTheMaskedLoss) {
  for (const char* name : {"bert", "distilbert"}) {
    const Golden g = load_golden(name);
    QaModel m(g.config, Precision::f32);
    load_params(m, g);
    Packed p = pack(g, all_rows(g));
    const int64_t N = static_cast<int64_t>(p.ids.size());
    ASSERT_LT(N, g.B * g.T) << "the golden batch must have padding to remove";
    std::vector<float> s(N), e(N);
    const float loss = m.forward(p.batch, StepOptions{}, s.data(), e.data());
    m.backward();

    const auto ref_s = g.file.read_f32("f32.start_logits"), ref_e = g.file.read_f32("f32.end_logits");
    const double lscale = std::max(max_abs(ref_s.data(), static_cast<int64_t>(ref_s.size())),
                                   max_abs(ref_e.data(), static_cast<int64_t>(ref_e.size())));
    std::vector<float> real_s, real_e;
    for (int64_t k = 0; k < N; ++k) {
      real_s.push_back(ref_s[p.padded_index[k]]);
      real_e.push_back(ref_e[p.padded_index[k]]);
    }
    EXPECT_LE(rel_err(s.data(), real_s, 1e-2 * lscale), 1e-4) << name << " start logits";
    EXPECT_LE(rel_err(e.data(), real_e, 1e-2 * lscale), 1e-4) << name << " end logits";

    const float ref_loss = g.file.read_f32("packed.loss").at(0);
    EXPECT_NEAR(loss, ref_loss, 1e-4 * std::fabs(ref_loss)) << name;
    // The masked loss is a different number from HF's padded one on this batch (row 2's start label is a
    // pad position there): the comparison above is not vacuous.
    EXPECT_GT(std::fabs(ref_loss - g.file.read_f32("f32.loss").at(0)), 1e-3) << name;
    double scale = 0;
    for (const ParamInfo& pi : m.params()) {
      const auto r = g.file.read_f32("packed.grad." + pi.name);
      scale = std::max(scale, max_abs(r.data(), pi.numel()));
    }
    for (const ParamInfo& pi : m.params()) {
      const auto r = g.file.read_f32("packed.grad." + pi.name);
      EXPECT_LE(rel_err(m.grads_data() + pi.offset, r, 1e-2 * scale), 1e-4) << name << " grad " << pi.name;
    }
  }
}

// Train mode: every dropout site (embeddings, attention probabilities, hidden outputs, DistilBERT's QA
// dropout) draws the padded layout's counters, so real tokens see the same masks.
TEST(PackedBatch, TrainModeLogitsEqualThePaddedComputationOnRealTokens) {
  for (const char* name : {"bert", "distilbert"}) {
    const Golden g = load_golden(name);
    QaModel m(g.config, Precision::f32);
    load_params(m, g);
    Packed p = pack(g, all_rows(g));
    for (bool row_keys : {false, true}) {
      StepOptions o{true, 17, 3, {}};
      if (row_keys) o.row_keys = {40, 7, 123};
      std::vector<float> ps(g.B * g.T), pe(g.B * g.T);
      m.forward(batch_of(g), o, ps.data(), pe.data());
      std::vector<float> s(p.ids.size()), e(p.ids.size());
      m.forward(p.batch, o, s.data(), e.data());
      for (size_t k = 0; k < s.size(); ++k) {
        EXPECT_NEAR(s[k], ps[p.padded_index[k]], 1e-5f) << name << " row_keys=" << row_keys << " token " << k;
        EXPECT_NEAR(e[k], pe[p.padded_index[k]], 1e-5f) << name << " row_keys=" << row_keys << " token " << k;
      }
      // And eval differs from train: dropout really ran.
      std::vector<float> es(p.ids.size());
      m.forward(p.batch, StepOptions{}, es.data(), nullptr);
      EXPECT_NE(es, s) << name;
    }
  }
}

TEST(PackedBatch, AFeatureDoesNotDependOnItsBatchMates) {
  const Golden g = load_golden("bert");
  QaModel m(g.config, Precision::f32);
  load_params(m, g);
  Packed all = pack(g, all_rows(g));
  Packed one = pack(g, {1});
  StepOptions o_all{true, 3, 0, {5, 9, 2}}, o_one{true, 3, 0, {9}};
  std::vector<float> s_all(all.ids.size()), s_one(one.ids.size());
  m.forward(all.batch, o_all, s_all.data(), nullptr);
  m.forward(one.batch, o_one, s_one.data(), nullptr);
  const int64_t first = all.lens[0];
  for (size_t k = 0; k < s_one.size(); ++k) EXPECT_NEAR(s_one[k], s_all[first + k], 1e-5f) << k;
}

TEST(PackedBatch, BackwardAccumulatesLikePaddedAndReportsEveryParameter) {
  const Golden g = load_golden("distilbert");
  QaModel m(g.config, Precision::f32);
  load_params(m, g);
  Packed p = pack(g, all_rows(g));
  StepOptions o{true, 2, 1, {1, 2, 3}};
  m.forward(p.batch, o, nullptr, nullptr);
  m.backward();
  const std::vector<float> once(m.grads_data(), m.grads_data() + m.num_params());
  m.forward(p.batch, o, nullptr, nullptr);
  int64_t reported = 0;
  m.backward([&](int64_t, int64_t) { ++reported; }, 0.5f, /*accumulate=*/true);
  EXPECT_EQ(reported, static_cast<int64_t>(m.params().size()));
  for (int64_t i = 0; i < m.num_params(); ++i)
    ASSERT_NEAR(m.grads_data()[i], 1.5f * once[i], 1e-6f + 1e-5f * std::fabs(once[i])) << i;
}

// Evaluation runs without keeping activations (layers overwrite each other's buffers, and the FFN's GELU
// rides on its matmul): the same logits up to the GELU's rounding, padded or packed, f32 or bf16, less
// memory, and no backward.
TEST(PackedBatch, InferenceWithoutActivationsGivesTheSameLogitsInLessMemory) {
  for (const Precision prec : {Precision::f32, Precision::bf16})
    for (const char* name : {"bert", "distilbert"}) {
      const Golden g = load_golden(name);
      Packed p = pack(g, all_rows(g));
      for (bool packed : {false, true}) {
        const Batch b = packed ? p.batch : batch_of(g);
        const int64_t n = packed ? static_cast<int64_t>(p.ids.size()) : g.B * g.T;
        QaModel kept(g.config, prec), lean(g.config, prec);
        load_params(kept, g);
        load_params(lean, g);
        std::vector<float> a(n), b2(n), e1(n), e2(n);
        kept.forward(b, StepOptions{}, a.data(), e1.data());
        StepOptions o;
        o.keep_activations = false;
        lean.forward(b, o, b2.data(), e2.data());
        // f32: two GELU implementations (ours, oneDNN's post-op) differ in the last bits; bf16: that can move
        // an activation across a bf16 rounding boundary.
        const double tol = prec == Precision::f32 ? 1e-5 : 2e-2;
        const std::string what = std::string(name) + (packed ? " packed" : " padded") +
                                 (prec == Precision::f32 ? " f32" : " bf16");
        EXPECT_LE(rel_err(b2.data(), a, tol * max_abs(a.data(), n)), tol) << what;
        EXPECT_LE(rel_err(e2.data(), e1, tol * max_abs(e1.data(), n)), tol) << what;
        EXPECT_LT(lean.activation_bytes(), kept.activation_bytes()) << name;
        EXPECT_THROW(lean.backward(), Error) << name;
        // A training forward after it gets every layer's buffers back.
        lean.forward(b, StepOptions{}, b2.data(), nullptr);
        lean.backward();
        EXPECT_EQ(a, b2) << name;
      }
    }
}

// Packed batches bring a new token count (and sum of squared lengths) every step. The activation buffers keep
// a quarter of headroom over the largest batch yet, so a batch a little larger than the last reuses them, a
// much larger one rebuilds them, and a smaller one never shrinks them; the logits do not depend on which
// happened.
TEST(PackedBatch, GrowingBatchesReuseTheBuffersWithinAQuarterOfHeadroom) {
  const Golden g = load_golden("bert");
  ASSERT_GE(g.T, 16);
  QaModel m(g.config, Precision::f32), fresh(g.config, Precision::f32);
  load_params(m, g);
  load_params(fresh, g);
  auto batch = [&](const std::vector<int32_t>& lens, std::vector<int32_t>& ids, std::vector<int32_t>& types) {
    ids.clear();
    for (size_t b = 0; b < lens.size(); ++b)
      for (int32_t t = 0; t < lens[b]; ++t) ids.push_back(static_cast<int32_t>(1 + (7 * t + 3 * b) % 50));
    types.assign(ids.size(), 0);
    Batch x;
    x.B = static_cast<int64_t>(lens.size());
    x.T = g.T;
    x.seq_lens = lens.data();
    x.input_ids = ids.data();
    x.token_type_ids = types.data();
    return x;
  };
  std::vector<int32_t> ids, types;
  auto bytes_after = [&](const std::vector<int32_t>& lens) {
    m.forward(batch(lens, ids, types), StepOptions{}, nullptr, nullptr);
    return m.activation_bytes();
  };
  const int64_t first = bytes_after({8, 8});    // 16 tokens, 128 squared
  EXPECT_EQ(bytes_after({8, 9}), first);        // +6% tokens, +13% squared: reused
  const int64_t grown = bytes_after({16, 16});  // twice the tokens: rebuilt
  EXPECT_GT(grown, first);
  EXPECT_EQ(bytes_after({4, 5}), grown);  // smaller: kept
  // Logits after all that reuse equal a fresh model's on the same batch.
  const std::vector<int32_t> lens = {11, 7};
  std::vector<int32_t> ids2, types2;
  const Batch x = batch(lens, ids, types), y = batch(lens, ids2, types2);
  std::vector<float> s1(18), e1(18), s2(18), e2(18);
  m.forward(x, StepOptions{}, s1.data(), e1.data());
  fresh.forward(y, StepOptions{}, s2.data(), e2.data());
  EXPECT_EQ(s1, s2);
  EXPECT_EQ(e1, e2);
}

// The trainer's bf16 step: AdamW writes the matmuls' bf16 weight copies in its own pass instead of the next
// forward converting them; the next forward is bit for bit the one after a conversion.
TEST(PackedBatch, Bf16CopiesWrittenByTheOptimizerEqualTheForwardsOwnConversion) {
  const Golden g = load_golden("bert");
  Packed p = pack(g, all_rows(g));
  std::vector<std::vector<float>> logits;
  for (const bool fused : {false, true}) {
    QaModel m(g.config, Precision::bf16);
    load_params(m, g);
    m.forward(p.batch, StepOptions{}, nullptr, nullptr);
    m.backward();
    const int64_t n = m.num_params();
    std::vector<float> ea(n), eas(n);
    const std::vector<kernels::SlabRange> ranges{{0, n, true}};
    kernels::adamw_step(m.params_data(), m.grads_data(), ea.data(), eas.data(), ranges,
                        kernels::AdamWHyper{1e-2, 0.9, 0.999, 1e-8, 0.01}, 1,
                        fused ? m.low_precision_weights() : nullptr);
    m.mark_weights_changed(/*low_precision_written=*/fused);
    logits.emplace_back(p.ids.size());
    m.forward(p.batch, StepOptions{}, logits.back().data(), nullptr);
  }
  EXPECT_EQ(logits[0], logits[1]);
  QaModel f32(g.config, Precision::f32);
  EXPECT_EQ(f32.low_precision_weights(), nullptr);
}

TEST(PackedBatch, Bf16StaysCloseToF32) {
  const Golden g = load_golden("bert");
  QaModel m32(g.config, Precision::f32), m16(g.config, Precision::bf16);
  load_params(m32, g);
  load_params(m16, g);
  Packed p = pack(g, all_rows(g));
  std::vector<float> a(p.ids.size()), b(p.ids.size());
  m32.forward(p.batch, StepOptions{}, a.data(), nullptr);
  m16.forward(p.batch, StepOptions{}, b.data(), nullptr);
  EXPECT_LE(rel_err(b.data(), a, 1e-2 * max_abs(a.data(), static_cast<int64_t>(a.size()))), 0.05);
}

TEST(PackedBatch, BadPackedBatchesThrowOneLineErrors) {
  const Golden g = load_golden("bert");
  QaModel m(g.config, Precision::f32);
  load_params(m, g);
  Packed p = pack(g, all_rows(g));
  auto expect_error = [&](const Batch& bad, const std::string& needle) {
    expect_forward_error(m, bad, needle);
  };
  Batch bad = p.batch;
  bad.attention_mask = g.mask.data();
  expect_error(bad, "attention_mask");
  std::vector<int32_t> lens = p.lens;
  lens[1] = 0;
  bad = p.batch;
  bad.seq_lens = lens.data();
  expect_error(bad, "seq_lens[1]");
  lens = p.lens;
  lens[0] = static_cast<int32_t>(g.T + 1);
  bad.seq_lens = lens.data();
  expect_error(bad, "seq_lens[0]");
  // A bad token is named by its sequence and position in that sequence, not by its packed row.
  std::vector<int32_t> ids = p.ids;
  ids[p.lens[0] + 3] = static_cast<int32_t>(g.config.vocab_size);
  bad = p.batch;
  bad.input_ids = ids.data();
  expect_error(bad, "input_ids of packed sequence 1 at position 3");
  std::vector<int32_t> types = p.types;
  types[p.lens[0] + p.lens[1] + 2] = 2;
  bad = p.batch;
  bad.token_type_ids = types.data();
  expect_error(bad, "token_type_ids of packed sequence 2 at position 2");
}

}  // namespace
}  // namespace ct::model

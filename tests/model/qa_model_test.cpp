// QaModel against PyTorch golden fixtures (scripts/make_golden.py: logits, loss and every parameter gradient
// of tiny BERT and DistilBERT QA models, f32 and bf16 autocast), plus dropout reproducibility, the
// gradient-ready callback, gradient accumulation, initialization and bad inputs.
//
// Error measure, per tensor: max|ours - golden| / max(max|golden|, floor), floor = 1e-2 x the largest
// magnitude among the model's gradients (logits: among the logits). The floor matters for gradients that are
// zero in exact arithmetic (attention key biases, qa_outputs.bias, the last LayerNorm bias): the golden holds
// rounding noise there, and relative error against noise means nothing.
//   f32:  bound 1e-4 against the reference computed in float64.
//   bf16: bound kBf16VsTorchBound against torch.autocast(bfloat16) and kBf16VsExactBound against float64.
//   Both
//         sides round matmul inputs to bf16 (8 mantissa bits, ~0.4% per rounding), but torch 1.13 also runs
//         layer norm, softmax and GELU in bf16 and emits bf16 logits, while we keep those in f32; they differ
//         by a few bf16 roundings compounded through 2 layers. torch's own bf16 gradients land ~1% from
//         float64 here (up to ~9% on qa_outputs.bias, whose exact gradient is 0 and which feels bf16 logits
//         most).
#include "qa_model.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "golden_util.h"
#include "kernels/cpu_features.h"
#include "model/safetensors.h"

namespace ct::model {
namespace {

constexpr double kBf16VsTorchBound = 0.15;
constexpr double kBf16VsExactBound = 0.05;

// Compares one model run with one golden set ("f32." or "bf16."); returns the worst gradient error.
double compare(const std::string& what, const Golden& g, const QaModel& m, const std::string& pre, float loss,
               const std::vector<float>& start, const std::vector<float>& end, double bound) {
  const double floor_frac = 1e-2;
  const float ref_loss = g.file.read_f32(pre + "loss").at(0);
  EXPECT_LE(std::fabs(loss - ref_loss) / std::fabs(ref_loss), bound)
      << what << " loss " << loss << " vs " << ref_loss;
  const auto ref_start = g.file.read_f32(pre + "start_logits");
  const auto ref_end = g.file.read_f32(pre + "end_logits");
  const double lscale =
      std::max(max_abs(ref_start.data(), ref_start.size()), max_abs(ref_end.data(), ref_end.size()));
  const double e_start = rel_err(start.data(), ref_start, floor_frac * lscale);
  const double e_end = rel_err(end.data(), ref_end, floor_frac * lscale);
  EXPECT_LE(e_start, bound) << what << " start_logits";
  EXPECT_LE(e_end, bound) << what << " end_logits";
  double scale = 0;
  std::map<std::string, std::vector<float>> ref;
  for (const ParamInfo& p : m.params()) {
    ref[p.name] = g.file.read_f32(pre + "grad." + p.name);
    scale = std::max(scale, max_abs(ref[p.name].data(), p.numel()));
  }
  double worst = 0;
  std::string worst_name;
  for (const ParamInfo& p : m.params()) {
    const double e = rel_err(m.grads_data() + p.offset, ref[p.name], floor_frac * scale);
    EXPECT_LE(e, bound) << what << " vs " << pre << "grad." << p.name;
    if (e > worst) worst = e, worst_name = p.name;
  }
  std::printf("[golden %s vs %s] loss %.7f vs %.7f, logits rel err %.2e/%.2e, worst grad rel err %.2e (%s)\n",
              what.c_str(), pre.c_str(), loss, ref_loss, e_start, e_end, worst, worst_name.c_str());
  return worst;
}

void check_golden(const std::string& name, Precision precision) {
  const Golden g = load_golden(name);
  QaModel m(g.config, precision);
  load_params(m, g);
  std::vector<float> start(g.B * g.T), end(g.B * g.T);
  const float loss = m.forward(batch_of(g), StepOptions{false, 1, 0, {}}, start.data(), end.data());
  m.backward();
  if (precision == Precision::f32) {
    compare(name + " f32", g, m, "f32.", loss, start, end, 1e-4);
  } else {
    compare(name + " bf16", g, m, "bf16.", loss, start, end, kBf16VsTorchBound);
    compare(name + " bf16", g, m, "f32.", loss, start, end, kBf16VsExactBound);
  }
}

TEST(QaModelGolden, BertF32) {
  check_golden("bert", Precision::f32);
}
TEST(QaModelGolden, DistilBertF32) {
  check_golden("distilbert", Precision::f32);
}

// bf16 runs on every CPU (widened to f32 where oneDNN has no bf16 matmul): same bounds either way.
TEST(QaModelGolden, BertBf16) {
  check_golden("bert", Precision::bf16);
}

TEST(QaModelGolden, DistilBertBf16) {
  check_golden("distilbert", Precision::bf16);
}

TEST(QaModelGolden, BertWithoutTokenTypesEqualsZeroTypes) {
  Golden g = load_golden("bert");
  QaModel m(g.config, Precision::f32);
  load_params(m, g);
  std::vector<float> a(g.B * g.T), b(g.B * g.T);
  m.forward(batch_of(g, false), StepOptions{}, a.data(), nullptr);
  std::fill(g.types.begin(), g.types.end(), 0);
  m.forward(batch_of(g, true), StepOptions{}, b.data(), nullptr);
  EXPECT_EQ(a, b);
}

// --- dropout, callback, accumulation: on the golden BERT model, in train mode ---

struct RunResult {
  float loss;
  std::vector<float> logits, grads;
};

RunResult run_step(QaModel& m, const Golden& g, const StepOptions& o) {
  RunResult r;
  r.logits.resize(g.B * g.T);
  r.loss = m.forward(batch_of(g), o, r.logits.data(), nullptr);
  m.backward();
  r.grads.assign(m.grads_data(), m.grads_data() + m.num_params());
  return r;
}

TEST(QaModelDropout, SameSeedAndStepReproduceDifferentStepsDiffer) {
  for (const char* name : {"bert", "distilbert"}) {
    Golden g = load_golden(name);
    QaModel m(g.config, Precision::f32);
    load_params(m, g);
    const RunResult a = run_step(m, g, StepOptions{true, 5, 3, {}});
    const RunResult b = run_step(m, g, StepOptions{true, 5, 3, {}});
    const RunResult c = run_step(m, g, StepOptions{true, 5, 4, {}});
    const RunResult d = run_step(m, g, StepOptions{true, 6, 3, {}});
    const RunResult eval = run_step(m, g, StepOptions{false, 5, 3, {}});
    EXPECT_EQ(a.loss, b.loss) << name;
    EXPECT_EQ(a.logits, b.logits) << name;
    EXPECT_EQ(a.grads, b.grads) << name;
    EXPECT_NE(a.logits, c.logits) << name;
    EXPECT_NE(a.logits, d.logits) << name;
    EXPECT_NE(a.logits, eval.logits) << name;
    // Thread count does not change the masks.
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    const RunResult one = run_step(m, g, StepOptions{true, 5, 3, {}});
    omp_set_num_threads(threads);
    for (size_t i = 0; i < a.logits.size(); ++i)
      EXPECT_NEAR(one.logits[i], a.logits[i], 1e-5) << name << " " << i;
  }
}

TEST(QaModelBackward, CallbackReportsEveryParameterOnceInBackwardOrderWithFinalValues) {
  for (const char* name : {"bert", "distilbert"}) {
    Golden g = load_golden(name);
    QaModel m(g.config, Precision::f32);
    load_params(m, g);
    m.forward(batch_of(g), StepOptions{true, 1, 1, {}}, nullptr, nullptr);
    std::vector<std::pair<int64_t, int64_t>> seen;
    std::vector<std::vector<float>> at_report;
    m.backward([&](int64_t off, int64_t n) {
      seen.emplace_back(off, n);
      at_report.emplace_back(m.grads_data() + off, m.grads_data() + off + n);
    });
    ASSERT_EQ(seen.size(), m.params().size()) << name;
    for (size_t i = 0; i < seen.size(); ++i) {
      const ParamInfo& p = m.params()[m.params().size() - 1 - i];  // reverse slab order
      EXPECT_EQ(seen[i].first, p.offset) << name << " " << p.name;
      EXPECT_EQ(seen[i].second, p.numel()) << name << " " << p.name;
      const std::vector<float> final_grad(m.grads_data() + p.offset, m.grads_data() + p.offset + p.numel());
      EXPECT_EQ(at_report[i], final_grad) << name << " " << p.name << " changed after it was reported";
    }
  }
}

TEST(QaModelBackward, AccumulateAddsAndOverwriteReplaces) {
  Golden g = load_golden("bert");
  QaModel m(g.config, Precision::f32);
  load_params(m, g);
  const RunResult once = run_step(m, g, StepOptions{true, 2, 9, {}});
  m.forward(batch_of(g), StepOptions{true, 2, 9, {}}, nullptr, nullptr);
  m.backward({}, 0.5f, /*accumulate=*/true);  // once + 0.5 * once
  for (int64_t i = 0; i < m.num_params(); ++i)
    ASSERT_NEAR(m.grads_data()[i], 1.5f * once.grads[i], 1e-6f + 1e-5f * std::fabs(once.grads[i])) << i;
  const RunResult again = run_step(m, g, StepOptions{true, 2, 9, {}});
  EXPECT_EQ(again.grads, once.grads);
}

TEST(QaModelBackward, CallerOwnedGradientSlab) {
  Golden g = load_golden("distilbert");
  std::vector<float> grads(make_param_layout(g.config).total, 7.0f);
  QaModel m(g.config, Precision::f32, grads.data());
  load_params(m, g);
  m.forward(batch_of(g), StepOptions{}, nullptr, nullptr);
  m.backward();
  EXPECT_EQ(m.grads_data(), grads.data());
  QaModel own(g.config, Precision::f32);
  load_params(own, g);
  own.forward(batch_of(g), StepOptions{}, nullptr, nullptr);
  own.backward();
  EXPECT_TRUE(std::equal(grads.begin(), grads.end(), own.grads_data()));
}

TEST(QaModelBackward, ForwardOnlyModelHoldsNoGradientSlab) {
  Golden g = load_golden("bert");
  QaModel m(g.config, Precision::f32);
  load_params(m, g);
  const EncoderModel& view = m;
  m.forward(batch_of(g), StepOptions{}, nullptr, nullptr);
  EXPECT_EQ(view.grads_data(), nullptr) << "evaluation allocated a gradient slab";
  const RunResult trained = run_step(m, g, StepOptions{true, 2, 9, {}});  // the first backward makes it
  ASSERT_NE(view.grads_data(), nullptr);
  QaModel fresh(g.config, Precision::f32);
  load_params(fresh, g);
  EXPECT_EQ(run_step(fresh, g, StepOptions{true, 2, 9, {}}).grads, trained.grads);
}

// --- layout and initialization ---

TEST(ParamLayout, HfNamesCountsAndNoDecayRule) {
  ModelConfig bert;  // bert-base defaults
  const ParamLayout lb = make_param_layout(bert);
  EXPECT_EQ(lb.total, 108893186);
  ModelConfig distil;
  distil.model_type = "distilbert";
  distil.num_hidden_layers = 6;
  distil.type_vocab_size = 0;
  const ParamLayout ld = make_param_layout(distil);
  EXPECT_EQ(ld.total, 66364418);
  EXPECT_EQ(lb.params.front().name, "bert.embeddings.word_embeddings.weight");
  EXPECT_EQ(lb.params.back().name, "qa_outputs.bias");
  EXPECT_NE(lb.index_at(lb.layers[3].qkv_w), -1);
  EXPECT_EQ(lb.params[lb.index_at(lb.layers[3].qkv_w)].name,
            "bert.encoder.layer.3.attention.self.query.weight");
  EXPECT_EQ(ld.params[ld.index_at(ld.layers[5].ffn_out_w)].name,
            "distilbert.transformer.layer.5.ffn.lin2.weight");
  int64_t off = 0;
  for (const ParamInfo& p : lb.params) {
    EXPECT_EQ(p.offset, off) << p.name;
    off += p.numel();
    const bool no_decay =
        p.name.find("bias") != std::string::npos || p.name.find("LayerNorm") != std::string::npos;
    EXPECT_EQ(p.decay, !no_decay) << p.name;
  }
  for (const ParamInfo& p : ld.params) {
    const bool no_decay = p.name.find("bias") != std::string::npos ||
                          p.name.find("LayerNorm") != std::string::npos ||
                          p.name.find("layer_norm") != std::string::npos;
    EXPECT_EQ(p.decay, !no_decay) << p.name;
  }
}

TEST(ParamLayout, RejectsConfigsItCannotRun) {
  ModelConfig c;
  c.hidden_size = 30;
  c.num_attention_heads = 4;
  EXPECT_THROW(make_param_layout(c), Error);
  c = ModelConfig{};
  c.model_type = "gpt2";
  EXPECT_THROW(make_param_layout(c), Error);
  c = ModelConfig{};
  c.hidden_act = "swish";
  EXPECT_THROW(make_param_layout(c), Error);
  c = ModelConfig{};
  c.pad_token_id = c.vocab_size;
  EXPECT_THROW(make_param_layout(c), Error);
  c = ModelConfig{};
  c.hidden_dropout_prob = 1.0;
  EXPECT_THROW(make_param_layout(c), Error);
}

TEST(QaModelInit, HfInitDeterministicAndThreadInvariant) {
  Golden g = load_golden("bert");
  QaModel a(g.config, Precision::f32), b(g.config, Precision::f32);
  a.init_weights(11);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  b.init_weights(11);
  omp_set_num_threads(threads);
  ASSERT_TRUE(std::equal(a.params_data(), a.params_data() + a.num_params(), b.params_data()));
  const ParamLayout& lay = a.layout();
  const float* w = a.params_data();
  for (const ParamInfo& p : a.params()) {
    const bool ln = p.name.find("LayerNorm") != std::string::npos;
    const bool bias = p.name.find(".bias") != std::string::npos;
    if (ln && !bias) {
      for (int64_t i = 0; i < p.numel(); ++i) ASSERT_EQ(w[p.offset + i], 1.0f) << p.name;
    } else if (bias) {
      for (int64_t i = 0; i < p.numel(); ++i) ASSERT_EQ(w[p.offset + i], 0.0f) << p.name;
    } else {
      double s = 0, s2 = 0;
      for (int64_t i = 0; i < p.numel(); ++i)
        s += w[p.offset + i], s2 += double(w[p.offset + i]) * w[p.offset + i];
      const double sd = std::sqrt(s2 / p.numel() - (s / p.numel()) * (s / p.numel()));
      EXPECT_NEAR(sd, g.config.initializer_range, 0.25 * g.config.initializer_range) << p.name;
    }
  }
  for (int64_t i = 0; i < g.config.hidden_size; ++i)
    EXPECT_EQ(w[lay.word_emb + g.config.pad_token_id * g.config.hidden_size + i], 0.0f);
  QaModel c(g.config, Precision::f32);
  c.init_weights(12);
  EXPECT_FALSE(std::equal(a.params_data(), a.params_data() + a.num_params(), c.params_data()));
  // A fresh head alone is the same as the head of a full init.
  QaModel d(g.config, Precision::f32);
  d.init_weights(11, "qa_outputs.");
  EXPECT_TRUE(std::equal(w + lay.qa_begin, w + lay.qa_end, d.params_data() + lay.qa_begin));
  EXPECT_EQ(d.params_data()[lay.word_emb + 100], 0.0f);
}

// --- bad input ---

TEST(QaModelErrors, BadBatchesThrowOneLineErrors) {
  Golden g = load_golden("bert");
  QaModel m(g.config, Precision::f32);
  load_params(m, g);
  Batch b = batch_of(g);
  auto expect_error = [&](const Batch& bad, const std::string& needle) {
    expect_forward_error(m, bad, needle);
  };
  std::vector<int32_t> ids = g.ids;
  ids[7] = static_cast<int32_t>(g.config.vocab_size);
  Batch bad = b;
  bad.input_ids = ids.data();
  expect_error(bad, "");
  std::vector<int32_t> mask = g.mask;
  mask[3] = 2;
  bad = b;
  bad.attention_mask = mask.data();
  expect_error(bad, "attention_mask");
  std::vector<int32_t> types = g.types;
  types[2] = 2;
  bad = b;
  bad.token_type_ids = types.data();
  expect_error(bad, "");
  bad = b;
  bad.T = g.config.max_position_embeddings + 1;
  std::vector<int32_t> long_ids(bad.B * bad.T, 1);
  bad.input_ids = long_ids.data();
  bad.attention_mask = nullptr;
  bad.token_type_ids = nullptr;
  expect_error(bad, "max_position_embeddings");
  bad = b;
  bad.end_positions = nullptr;
  expect_error(bad, "together");
  bad = b;
  bad.B = 0;
  expect_error(bad, "positive");
  // No positions: logits only, NaN loss, and backward refuses.
  bad = b;
  bad.start_positions = bad.end_positions = nullptr;
  EXPECT_TRUE(std::isnan(m.forward(bad, StepOptions{}, nullptr, nullptr)));
  EXPECT_THROW(m.backward(), Error);
  QaModel fresh(g.config, Precision::f32);
  EXPECT_THROW(fresh.backward(), Error);
}

}  // namespace
}  // namespace ct::model

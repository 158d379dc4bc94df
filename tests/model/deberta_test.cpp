// DeBERTa-v2/v3 (model_type deberta-v2) against the plain-PyTorch reference of scripts/golden_deberta.py:
// logits, loss and every parameter gradient of each head, padded and packed, f32 and bf16; plus the config's
// reading, writing and refusals, the Hub shapes' parameter count and the MLM head's two namings.
//
// Error measure as in encoder_heads_test: per tensor max|ours - golden| / max(max|golden|, floor), floor =
// 1e-2 x the largest gradient magnitude of the model (logits: of the logits).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "golden_util.h"
#include "kernels/cpu_features.h"
#include "model/checkpoint.h"
#include "model/encoder_model.h"
#include "model/safetensors.h"

namespace ct::model {
namespace {

// The bounds of encoder_heads_test (f32 vs float64; bf16 vs torch's autocast run and vs float64).
constexpr double kF32Bound = 1e-4;
constexpr double kBf16VsTorchBound = 0.15;
constexpr double kBf16VsExactBound = 0.08;

struct Golden {
  ModelConfig config;
  HeadKind head = HeadKind::span;
  int64_t B = 0, T = 0, num_choices = 0;
  std::vector<int32_t> ids, types, mask, labels, start, end;
  std::vector<float> float_labels;
  SafetensorsFile file;
};

Golden load(const std::string& stem) {
  const std::string path = golden_path(stem);
  Golden g{{}, HeadKind::span, 0, 0, 0, {}, {}, {}, {}, {}, {}, {}, SafetensorsFile::open(path)};
  g.num_choices = std::stoll(g.file.metadata().at("num_choices"));
  g.config = config_from_json(nlohmann::json::parse(g.file.metadata().at("config")), path);
  g.head = head_from_name(g.file.metadata().at("head"));
  const SafetensorInfo& ids = g.file.at("input.input_ids");
  g.B = ids.shape.at(0);
  g.T = ids.shape.at(1);
  g.ids = read_i32(g.file, "input.input_ids");
  g.types = read_i32(g.file, "input.token_type_ids");
  g.mask = read_i32(g.file, "input.attention_mask");
  if (g.file.find("input.labels")) g.labels = read_i32(g.file, "input.labels");
  if (g.file.find("input.float_labels")) g.float_labels = g.file.read_f32("input.float_labels");
  if (g.file.find("input.start_positions")) {
    g.start = read_i32(g.file, "input.start_positions");
    g.end = read_i32(g.file, "input.end_positions");
  }
  return g;
}

struct Inputs {
  std::vector<int32_t> ids, types, labels, seq_lens;
  Batch batch;
};

// Padded as the reference ran it, or packed: each sequence's real tokens end to end.
Inputs inputs_of(const Golden& g, bool packed) {
  Inputs in;
  const bool per_token = g.head == HeadKind::token_classification || g.head == HeadKind::masked_lm;
  if (!packed) {
    in.ids = g.ids;
    in.types = g.types;
    in.labels = g.labels;
  } else {
    for (int64_t b = 0; b < g.B; ++b) {
      int32_t len = 0;
      for (int64_t t = 0; t < g.T; ++t) len += g.mask[b * g.T + t];
      in.seq_lens.push_back(len);
      for (int64_t t = 0; t < len; ++t) {
        in.ids.push_back(g.ids[b * g.T + t]);
        in.types.push_back(g.types[b * g.T + t]);
        if (per_token) in.labels.push_back(g.labels[b * g.T + t]);
      }
    }
    if (!per_token) in.labels = g.labels;
  }
  Batch& b = in.batch;
  b.B = g.B;
  b.T = g.T;
  b.input_ids = in.ids.data();
  b.token_type_ids = in.types.data();
  b.attention_mask = packed ? nullptr : g.mask.data();
  b.seq_lens = packed ? in.seq_lens.data() : nullptr;
  b.labels = in.labels.empty() ? nullptr : in.labels.data();
  b.float_labels = g.float_labels.empty() ? nullptr : g.float_labels.data();
  b.start_positions = g.start.empty() ? nullptr : g.start.data();
  b.end_positions = g.end.empty() ? nullptr : g.end.data();
  b.num_choices = g.num_choices;
  return in;
}

// The golden logits in our layout (masked LM: labelled tokens only; packed: real tokens only).
std::vector<float> expected_logits(const Golden& g, const std::vector<float>& ref, bool packed) {
  if (g.head == HeadKind::sequence_classification || g.head == HeadKind::multiple_choice) return ref;
  const int64_t width = static_cast<int64_t>(ref.size()) / (g.B * g.T);
  std::vector<float> out;
  for (int64_t i = 0; i < g.B * g.T; ++i) {
    const bool keep = g.head == HeadKind::masked_lm ? g.labels[i] != -100 : (!packed || g.mask[i] == 1);
    if (keep) out.insert(out.end(), ref.begin() + i * width, ref.begin() + (i + 1) * width);
  }
  return out;
}

void load_params(EncoderModel& m, const Golden& g) {
  int64_t n_ref = 0;
  for (const auto& t : g.file.tensors()) n_ref += t.name.rfind("param.", 0) == 0;
  EXPECT_EQ(n_ref, static_cast<int64_t>(m.params().size()));
  for (const ParamInfo& p : m.params()) {
    const SafetensorInfo* t = g.file.find("param." + p.name);
    ASSERT_NE(t, nullptr) << "the reference has no " << p.name;
    ASSERT_EQ(t->shape, p.shape) << p.name;
    g.file.read_f32(*t, m.params_data() + p.offset);
  }
}

void compare(const std::string& what, const Golden& g, const EncoderModel& m, const std::string& pre,
             float loss, bool packed, double bound, bool gradients) {
  const float ref_loss = g.file.read_f32(pre + "loss").at(0);
  EXPECT_LE(std::fabs(loss - ref_loss) / std::fabs(ref_loss), bound)
      << what << " loss " << loss << " vs " << ref_loss;
  const auto ref_logits = expected_logits(g, g.file.read_f32(pre + "logits"), packed);
  ASSERT_EQ(m.logits().size(), ref_logits.size()) << what;
  const double e_logits = rel_err(m.logits().data(), ref_logits,
                                  1e-2 * max_abs(ref_logits.data(), static_cast<int64_t>(ref_logits.size())));
  EXPECT_LE(e_logits, bound) << what << " logits";
  double worst = 0;
  std::string worst_name;
  if (gradients) {
    std::map<std::string, std::vector<float>> ref;
    double scale = 0;
    for (const ParamInfo& p : m.params()) {
      ref[p.name] = g.file.read_f32(pre + "grad." + p.name);
      scale = std::max(scale, max_abs(ref[p.name].data(), p.numel()));
    }
    for (const ParamInfo& p : m.params()) {
      const double e = rel_err(m.grads_data() + p.offset, ref[p.name], 1e-2 * scale);
      EXPECT_LE(e, bound) << what << " vs " << pre << "grad." << p.name;
      if (e > worst) worst = e, worst_name = p.name;
    }
  }
  std::printf("[golden %s vs %s] loss %.7f vs %.7f, logits rel err %.2e, worst grad rel err %.2e (%s)\n",
              what.c_str(), pre.c_str(), loss, ref_loss, e_logits, worst, worst_name.c_str());
}

void check(const std::string& stem, Precision precision, bool packed) {
  const Golden g = load(stem);
  EncoderModel m(g.config, g.head, precision);
  load_params(m, g);
  Inputs in = inputs_of(g, packed);
  const float loss = m.forward(in.batch, StepOptions{false, 1, 0, {}});
  m.backward();
  const std::string what =
      stem + (precision == Precision::f32 ? " f32" : " bf16") + (packed ? " packed" : "");
  if (precision == Precision::f32) {
    compare(what, g, m, "f32.", loss, packed, kF32Bound, true);
  } else {
    compare(what, g, m, "bf16.", loss, packed, kBf16VsTorchBound, false);
    compare(what, g, m, "f32.", loss, packed, kBf16VsExactBound, true);
  }
}

const char* const kStems[] = {"deberta-v2_seq-cls",
                              "deberta-v2_seq-cls-soft",
                              "deberta-v2_token-cls",
                              "deberta-v2_qa",
                              "deberta-v2_mlm",
                              "deberta-v2_multiple-choice",
                              "deberta-v2-variant_token-cls",
                              "deberta-v2-variant_seq-cls",
                              "deberta-v2-wide_token-cls"};

class DebertaGoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DebertaGoldenTest, F32MatchesTheReference) {
  check(GetParam(), Precision::f32, false);
}

// Packed batches drop the pad rows; every head but QA (whose packed softmax spans fewer positions) then has
// the padded batch's loss and gradients, relative positions counted within each feature.
TEST_P(DebertaGoldenTest, F32PackedMatchesTheReference) {
  if (std::string(GetParam()).find("_qa") != std::string::npos) GTEST_SKIP() << "QA's packed loss differs";
  check(GetParam(), Precision::f32, true);
}

TEST_P(DebertaGoldenTest, Bf16StaysCloseToTheReference) {
  check(GetParam(), Precision::bf16, false);
}

TEST_P(DebertaGoldenTest, Bf16PackedStaysCloseToTheReference) {
  if (std::string(GetParam()).find("_qa") != std::string::npos) GTEST_SKIP() << "QA's packed loss differs";
  check(GetParam(), Precision::bf16, true);
}

INSTANTIATE_TEST_SUITE_P(Deberta, DebertaGoldenTest, ::testing::ValuesIn(kStems),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// microsoft/deberta-v3-base's config.json as the Hub has it.
const char* const kV3Base = R"({
  "model_type": "deberta-v2", "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
  "max_position_embeddings": 512, "relative_attention": true, "position_buckets": 256,
  "norm_rel_ebd": "layer_norm", "share_att_key": true, "pos_att_type": "p2c|c2p", "layer_norm_eps": 1e-7,
  "max_relative_positions": -1, "position_biased_input": false, "num_attention_heads": 12,
  "num_hidden_layers": 12, "type_vocab_size": 0, "vocab_size": 128100
})";

TEST(DebertaConfig, HubConfigLoadsRoundTripsAndHasHfsParameterCount) {
  const ModelConfig c = config_from_json(nlohmann::json::parse(kV3Base), "v3-base");
  EXPECT_TRUE(c.is_deberta());
  EXPECT_TRUE(c.has_c2p() && c.has_p2c() && c.share_att_key && c.norm_rel_ebd && !c.position_biased_input);
  EXPECT_EQ(c.relative_span(), 256);
  EXPECT_EQ(c.layer_norm_eps, 1e-7);
  const ModelConfig back =
      config_from_json(nlohmann::json::parse(config_to_json(c, HeadKind::sequence_classification)), "saved");
  EXPECT_EQ(back.pos_att_type, c.pos_att_type);
  EXPECT_EQ(back.position_buckets, 256);
  EXPECT_EQ(back.max_relative_positions, -1);
  EXPECT_EQ(back.type_vocab_size, 0);
  EXPECT_TRUE(back.share_att_key && back.norm_rel_ebd && !back.position_biased_input && back.legacy);
  EXPECT_EQ(back.architectures, std::vector<std::string>{"DebertaV2ForSequenceClassification"});
  // DebertaV2Model(deberta-v3-base) has 183,831,552 parameters (the reference of scripts/golden_deberta.py
  // counts the same); the sequence head adds the pooler and the classifier.
  const ParamLayout lay = make_param_layout(c, HeadKind::sequence_classification);
  EXPECT_EQ(lay.head.begin, 183831552);
  EXPECT_EQ(lay.total, 183831552 + 768 * 768 + 768 + 2 * 768 + 2);
  EXPECT_EQ(lay.params[lay.index_at(lay.rel_emb)].name, "deberta.encoder.rel_embeddings.weight");
  EXPECT_EQ(lay.params[lay.index_at(lay.layers[0].qkv_w)].name,
            "deberta.encoder.layer.0.attention.self.query_proj.weight");
  EXPECT_EQ(lay.params[lay.index_at(lay.head.dense_w)].name, "pooler.dense.weight");
}

// deberta-v3-large and mdeberta-v3-base as the Hub has them, and a fine-tuned checkpoint's config (pooler
// fields, labels, what transformers adds): each loads unedited and describes a model.
TEST(DebertaConfig, OtherHubConfigsLoadUnedited) {
  nlohmann::json large = nlohmann::json::parse(kV3Base);
  large["hidden_size"] = 1024;
  large["intermediate_size"] = 4096;
  large["num_attention_heads"] = 16;
  large["num_hidden_layers"] = 24;
  nlohmann::json mdeberta = nlohmann::json::parse(kV3Base);
  mdeberta["vocab_size"] = 251000;
  nlohmann::json tuned = nlohmann::json::parse(kV3Base);
  tuned.update(nlohmann::json::parse(R"({
    "architectures": ["DebertaV2ForSequenceClassification"], "id2label": {"0": "neg", "1": "pos"},
    "label2id": {"neg": 0, "pos": 1}, "pooler_dropout": 0, "pooler_hidden_act": "gelu", "pooler_hidden_size": 768,
    "torch_dtype": "float32", "transformers_version": "4.41.0", "legacy": true})"));
  for (const auto& [name, j] : {std::pair{"large", large}, {"mdeberta", mdeberta}, {"tuned", tuned}}) {
    const ModelConfig c = config_from_json(j, name);
    const ParamLayout lay =
        make_param_layout(c, head_from_architectures(c, HeadKind::sequence_classification));
    EXPECT_EQ(lay.params[lay.index_at(lay.rel_emb)].shape, (Shape{512, c.hidden_size})) << name;
    const ModelConfig back = config_from_json(nlohmann::json::parse(config_to_json(c)), name);
    EXPECT_EQ(back.vocab_size, c.vocab_size) << name;
    EXPECT_EQ(back.num_labels, c.num_labels) << name;
  }
}

TEST(DebertaConfig, UnsupportedOptionsAreRefusedNamingTheField) {
  auto refused = [](const std::string& edit_key, const nlohmann::json& value, const std::string& needle) {
    nlohmann::json j = nlohmann::json::parse(kV3Base);
    j[edit_key] = value;
    try {
      config_from_json(j, "config.json");
      ADD_FAILURE() << edit_key;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  };
  refused("conv_kernel_size", 3, "\"conv_kernel_size\"");
  refused("pos_att_type", "p2c|p2p", "\"pos_att_type\"");
  refused("relative_attention", false, "\"relative_attention\"");
  refused("pooler_hidden_size", 1024, "\"pooler_hidden_size\"");
  refused("norm_rel_ebd", "batch_norm", "\"norm_rel_ebd\"");
  refused("position_buckets", 2, "\"position_buckets\"");
}

// The MLM head under either HF naming (legacy cls.predictions.*, current lm_predictions.lm_head.*) loads into
// a model of the other.
TEST(DebertaCheckpoint, MlmHeadLoadsUnderEitherNaming) {
  const Golden g = load("deberta-v2_mlm");
  EncoderModel legacy(g.config, HeadKind::masked_lm, Precision::f32);
  load_params(legacy, g);
  const std::string path = ::testing::TempDir() + "ct_deberta_mlm.safetensors";
  save_hf_weights(path, legacy.params(), legacy.params_data());
  ModelConfig current = g.config;
  current.legacy = false;
  EncoderModel now(current, HeadKind::masked_lm, Precision::f32);
  EXPECT_EQ(now.layout().head_param_names().front(), "lm_predictions.lm_head.dense.weight");
  const LoadReport r = load_hf_weights(path, now.params(), now.params_data());
  EXPECT_TRUE(r.missing.empty());
  EXPECT_TRUE(r.unexpected.empty());
  EXPECT_TRUE(std::equal(now.params_data(), now.params_data() + now.num_params(), legacy.params_data()));
  const std::string back = ::testing::TempDir() + "ct_deberta_mlm_current.safetensors";
  save_hf_weights(back, now.params(), now.params_data());
  EncoderModel again(g.config, HeadKind::masked_lm, Precision::f32);
  EXPECT_TRUE(load_hf_weights(back, again.params(), again.params_data()).missing.empty());
  EXPECT_TRUE(
      std::equal(again.params_data(), again.params_data() + again.num_params(), legacy.params_data()));
}

// Dropout on (with per-row keys) replays exactly, differs from dropout off, and stays finite; init follows
// HF.
TEST(DebertaModel, DropoutReplaysAndInitIsHfs) {
  const Golden g = load("deberta-v2_seq-cls");
  ModelConfig c = g.config;
  c.hidden_dropout_prob = c.attention_probs_dropout_prob = 0.2;
  c.pooler_dropout = 0.1;
  EncoderModel d(c, g.head, Precision::f32);
  load_params(d, g);
  Inputs in = inputs_of(g, false);
  d.forward(in.batch, StepOptions{});
  const std::vector<float> eval = d.logits();
  StepOptions infer;  // one layer's activations at a time: the same logits, and no backward
  infer.keep_activations = false;
  d.forward(in.batch, infer);
  EXPECT_EQ(d.logits(), eval);
  EXPECT_THROW(d.backward(), Error);
  StepOptions train{true, 5, 0, {}};
  for (int64_t b = 0; b < g.B; ++b) train.row_keys.push_back(100 + static_cast<uint64_t>(b));
  const float l1 = d.forward(in.batch, train);
  d.backward();
  const std::vector<float> g1(d.grads_data(), d.grads_data() + d.num_params());
  const float l2 = d.forward(in.batch, train);
  d.backward();
  EXPECT_EQ(l1, l2);
  EXPECT_EQ(std::vector<float>(d.grads_data(), d.grads_data() + d.num_params()), g1);
  EXPECT_NE(d.logits(), eval);
  EXPECT_TRUE(std::isfinite(l1));

  EncoderModel fresh(g.config, g.head, Precision::f32);
  fresh.init_weights(7);
  const ParamLayout& lay = fresh.layout();
  EXPECT_EQ(fresh.params_data()[lay.rel_ln_w], 1.0f);
  EXPECT_EQ(fresh.params_data()[lay.rel_ln_b], 0.0f);
  EXPECT_NE(fresh.params_data()[lay.rel_emb], 0.0f);
  EXPECT_EQ(fresh.params_data()[lay.word_emb + g.config.pad_token_id * g.config.hidden_size], 0.0f);
}

// With every dropout on (embeddings, attention probabilities, pos_dropout on the relative embeddings, hidden
// outputs, the pooler's), backward differentiates the loss forward computed: central differences agree at the
// largest gradient of each tensor the dropouts touch (to ~5e-4 measured), padded and packed (which draws the
// padded batch's masks, so both see the same loss).
TEST(DebertaModel, DropoutBackwardMatchesFiniteDifferences) {
  const Golden g = load("deberta-v2_seq-cls");
  ModelConfig c = g.config;
  c.hidden_dropout_prob = c.attention_probs_dropout_prob = 0.2;
  c.pooler_dropout = 0.1;
  EncoderModel m(c, g.head, Precision::f32);
  load_params(m, g);
  for (bool packed : {false, true}) {
    Inputs in = inputs_of(g, packed);
    const StepOptions train{true, 9, 3, {}};
    m.forward(in.batch, train);
    m.backward();
    const std::vector<float> grad(m.grads_data(), m.grads_data() + m.num_params());
    for (const char* name : {"deberta.encoder.rel_embeddings.weight", "deberta.encoder.LayerNorm.weight",
                             "deberta.encoder.layer.1.attention.self.key_proj.weight",
                             "deberta.encoder.layer.0.attention.self.query_proj.bias",
                             "deberta.embeddings.word_embeddings.weight", "pooler.dense.weight"}) {
      const ParamInfo* p = nullptr;
      for (const auto& q : m.params())
        if (q.name == name) p = &q;
      ASSERT_NE(p, nullptr) << name;
      int64_t at = p->offset;
      for (int64_t i = p->offset; i < p->offset + p->numel(); ++i)
        if (std::fabs(grad[i]) > std::fabs(grad[at])) at = i;
      const float eps = 1e-2f, saved = m.params_data()[at];
      m.params_data()[at] = saved + eps;
      const double up = m.forward(in.batch, train);
      m.params_data()[at] = saved - eps;
      const double down = m.forward(in.batch, train);
      m.params_data()[at] = saved;
      const double fd = (up - down) / (2 * eps);
      EXPECT_NEAR(fd, grad[at], 0.01 * std::fabs(grad[at]) + 1e-4) << name << (packed ? " packed" : "");
    }
  }
}

// Attention runs as (sequence, head) tasks whatever thread takes them, and the relative embeddings'
// gradient sums the sequences' shares in sequence order: 2 and 3 threads give the same loss and every
// gradient bit for bit, with every dropout on, padded and packed, f32 and bf16 (2, not 1: see the attention
// kernel's test). Run where oneDNN's matmuls are its brgemm kernels (AVX-512 and up), whose split of a
// product follows the thread count its primitive was created for, the same in both runs.
TEST(DebertaModel, GradientsDoNotDependOnTheThreadCount) {
  if (!kernels::cpu_isa_at_least_avx512())
    GTEST_SKIP() << "oneDNN runs " << kernels::cpu_isa_name()
                 << ": its gemm-based matmul splits a weight gradient's reduction by the threads at hand, so "
                    "no model is thread-count invariant there";
  const Golden g = load("deberta-v2_seq-cls");
  ASSERT_GE(g.B, 2);  // the per-sequence shares
  ModelConfig c = g.config;
  c.hidden_dropout_prob = c.attention_probs_dropout_prob = 0.2;
  for (Precision prec : {Precision::f32, Precision::bf16})
    for (bool packed : {false, true}) {
      SCOPED_TRACE(std::string(prec == Precision::f32 ? "f32" : "bf16") + (packed ? " packed" : " padded"));
      EncoderModel m(c, g.head, prec);
      load_params(m, g);
      Inputs in = inputs_of(g, packed);
      auto run = [&](int threads) {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(threads);
        const float loss = m.forward(in.batch, StepOptions{true, 9, 3, {}});
        m.backward();
        omp_set_num_threads(saved);
        return std::make_pair(loss, std::vector<float>(m.grads_data(), m.grads_data() + m.num_params()));
      };
      const auto two = run(2), three = run(3);
      EXPECT_EQ(two.first, three.first);
      EXPECT_TRUE(two.second == three.second) << "gradients differ between 2 and 3 threads";
    }
}

}  // namespace
}  // namespace ct::model

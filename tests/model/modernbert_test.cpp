// ModernBERT (model_type "modernbert") against the plain-PyTorch reference (scripts/golden_modernbert.py:
// 3 layers global/local/global, local_attention 4 at T 12 so the band matters, rotary on both thetas):
// logits, loss and every parameter gradient for cls- and mean-pooled sequence classification, token
// classification and masked LM, padded and packed, f32 and bf16; the config's reader/writer and refusals;
// the slab's HF names; HF's truncated-normal init.
//
// Error measure as in encoder_heads_test: per tensor max|ours - golden| / max(max|golden|, floor), floor =
// 1e-2 x the largest gradient magnitude of the model (logits: of the logits).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "golden_util.h"
#include "model/checkpoint.h"
#include "model/config.h"
#include "model/encoder_model.h"
#include "model/flops.h"
#include "model/safetensors.h"

namespace ct::model {
namespace {

// bf16 as encoder_heads_test's bounds, but 0.1 against float64: on token classification torch's own autocast
// gradients land 6.7% from float64 (layer 0's mlp.Wo), ours 8.6% (layer 0's mlp.Wi): the GeGLU product of two
// bf16-rounded projections doubles the rounding the BERT FFN has.
constexpr double kF32Bound = 1e-4;
constexpr double kBf16VsTorchBound = 0.15;
constexpr double kBf16VsExactBound = 0.1;

struct MbGolden {
  std::string stem;
  ModelConfig config;
  HeadKind head = HeadKind::sequence_classification;
  int64_t B = 0, T = 0, num_choices = 0;
  std::vector<int32_t> ids, mask, labels, start, end;
  SafetensorsFile file;
};

MbGolden load_mb_golden(const std::string& stem) {
  const std::string path = golden_path(stem);
  MbGolden g{stem, {}, HeadKind::sequence_classification, 0, 0, 0, {}, {}, {},
             {},   {}, SafetensorsFile::open(path)};
  g.config = config_from_json(nlohmann::json::parse(g.file.metadata().at("config")), path);
  g.head = head_from_name(g.file.metadata().at("head"));
  g.num_choices = std::stoll(g.file.metadata().at("num_choices"));
  const SafetensorInfo& ids = g.file.at("input.input_ids");
  g.B = ids.shape.at(0);
  g.T = ids.shape.at(1);
  g.ids = read_i32(g.file, "input.input_ids");
  g.mask = read_i32(g.file, "input.attention_mask");
  if (g.file.find("input.labels")) g.labels = read_i32(g.file, "input.labels");
  if (g.file.find("input.start_positions")) {
    g.start = read_i32(g.file, "input.start_positions");
    g.end = read_i32(g.file, "input.end_positions");
  }
  return g;
}

struct Inputs {
  std::vector<int32_t> ids, labels, seq_lens;
  Batch batch;
};

// The golden batch padded, or packed: each feature's real tokens end to end.
Inputs inputs_of(const MbGolden& g, bool packed) {
  Inputs in;
  const bool per_token = g.head == HeadKind::token_classification || g.head == HeadKind::masked_lm;
  if (!packed) {
    in.ids = g.ids;
    in.labels = g.labels;
  } else {
    for (int64_t b = 0; b < g.B; ++b) {
      int32_t len = 0;
      for (int64_t t = 0; t < g.T; ++t) len += g.mask[b * g.T + t];
      in.seq_lens.push_back(len);
      for (int64_t t = 0; t < len; ++t) {
        in.ids.push_back(g.ids[b * g.T + t]);
        if (per_token) in.labels.push_back(g.labels[b * g.T + t]);
      }
    }
    if (!per_token) in.labels = g.labels;
  }
  Batch& b = in.batch;
  b.B = g.B;
  b.T = g.T;
  b.input_ids = in.ids.data();
  b.attention_mask = packed ? nullptr : g.mask.data();
  b.seq_lens = packed ? in.seq_lens.data() : nullptr;
  b.labels = in.labels.empty() ? nullptr : in.labels.data();
  b.num_choices = g.num_choices;
  b.start_positions = g.start.empty() ? nullptr : g.start.data();
  b.end_positions = g.end.empty() ? nullptr : g.end.data();
  return in;
}

// Token classification's (and QA's) logits at the real tokens (ours padded or packed, the golden's): a padded
// query beyond the band of any real key sees only padding (HF then averages uniformly over the keys), and no
// loss reads its logits, so they are not compared. The masked LM golden already holds the labelled rows only.
std::vector<float> real_rows(const MbGolden& g, const std::vector<float>& logits, bool packed) {
  const bool per_token = g.head == HeadKind::token_classification || g.head == HeadKind::span;
  if (!per_token || packed) return logits;
  const int64_t width = static_cast<int64_t>(logits.size()) / (g.B * g.T);
  std::vector<float> out;
  for (int64_t i = 0; i < g.B * g.T; ++i)
    if (g.mask[i] == 1) out.insert(out.end(), logits.begin() + i * width, logits.begin() + (i + 1) * width);
  return out;
}

void load_params(EncoderModel& m, const MbGolden& g) {
  float* slab = m.params_data();
  int64_t n_ref = 0;
  for (const auto& t : g.file.tensors()) n_ref += t.name.rfind("param.", 0) == 0;
  EXPECT_EQ(n_ref, static_cast<int64_t>(m.params().size())) << g.stem;
  for (const ParamInfo& p : m.params()) {
    const SafetensorInfo* t = g.file.find("param." + p.name);
    ASSERT_NE(t, nullptr) << g.stem << ": no " << p.name;
    ASSERT_EQ(t->shape, p.shape) << p.name;
    g.file.read_f32(*t, slab + p.offset);
  }
}

void compare(const std::string& what, const MbGolden& g, const EncoderModel& m, const std::string& pre,
             float loss, bool packed, double bound, bool gradients = true) {
  const double floor_frac = 1e-2;
  const float ref_loss = g.file.read_f32(pre + "loss").at(0);
  EXPECT_LE(std::fabs(loss - ref_loss) / std::fabs(ref_loss), bound)
      << what << " loss " << loss << " vs " << ref_loss;
  const std::string logits_pre = pre == "packed." ? "f32." : pre;  // packed QA: its own loss, the same logits
  const auto ref_logits = real_rows(g, g.file.read_f32(logits_pre + "logits"), false);
  const auto ours = real_rows(g, m.logits(), packed);
  ASSERT_EQ(ours.size(), ref_logits.size()) << what;
  const double e_logits =
      rel_err(ours.data(), ref_logits,
              floor_frac * max_abs(ref_logits.data(), static_cast<int64_t>(ref_logits.size())));
  EXPECT_LE(e_logits, bound) << what << " logits";
  if (!gradients) {
    std::printf("[golden %s vs %s] loss %.7f vs %.7f, logits rel err %.2e\n", what.c_str(), pre.c_str(), loss,
                ref_loss, e_logits);
    return;
  }
  double scale = 0;
  std::map<std::string, std::vector<float>> ref;
  for (const ParamInfo& p : m.params()) {
    ASSERT_NE(g.file.find(pre + "grad." + p.name), nullptr) << what << ": the reference has no " << p.name;
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
  std::printf("[golden %s vs %s] loss %.7f vs %.7f, logits rel err %.2e, worst grad rel err %.2e (%s)\n",
              what.c_str(), pre.c_str(), loss, ref_loss, e_logits, worst, worst_name.c_str());
}

void check(const std::string& stem, Precision precision, bool packed) {
  const MbGolden g = load_mb_golden(stem);
  EncoderModel m(g.config, g.head, precision);
  load_params(m, g);
  Inputs in = inputs_of(g, packed);
  const float loss = m.forward(in.batch, StepOptions{false, 1, 0, {}});
  m.backward();
  const std::string what =
      stem + (precision == Precision::f32 ? " f32" : " bf16") + (packed ? " packed" : "");
  // Packed QA has its own loss (pads are no answer candidates; padded, HF counts them).
  const bool own_packed = packed && g.file.find("packed.loss");
  if (precision == Precision::f32) {
    compare(what, g, m, own_packed ? "packed." : "f32.", loss, packed, kF32Bound);
  } else {
    if (!own_packed) compare(what, g, m, "bf16.", loss, packed, kBf16VsTorchBound, /*gradients=*/false);
    compare(what, g, m, own_packed ? "packed." : "f32.", loss, packed, kBf16VsExactBound);
  }
}

// -long: T 48, long enough for the banded local attention (see modernbert_body.cpp).
const char* const kStems[] = {
    "modernbert_seq-cls",        "modernbert_seq-cls-mean", "modernbert_token-cls",      "modernbert_mlm",
    "modernbert_token-cls-long", "modernbert_qa",           "modernbert_multiple-choice"};

TEST(ModernBert, F32MatchesTheReferencePadded) {
  for (const char* stem : kStems) check(stem, Precision::f32, false);
}

TEST(ModernBert, F32MatchesTheReferencePacked) {
  for (const char* stem : kStems) check(stem, Precision::f32, true);
}

// Global layers sharing one probabilities buffer, recomputed in backward (what long inputs run), give the
// same numbers; with attention dropout too (the recomputation draws the same masks).
TEST(ModernBert, RecomputedGlobalAttentionMatchesTheReference) {
  ::setenv("CORETRAIN_RECOMPUTE_ATTENTION_MB", "0", 1);
  for (const char* stem : kStems) {
    check(stem, Precision::f32, false);
    check(stem, Precision::f32, true);
  }
  MbGolden g = load_mb_golden("modernbert_token-cls");
  g.config.attention_probs_dropout_prob = 0.1;
  const StepOptions o{true, 17, 3, {}};
  EncoderModel recomputed(g.config, g.head, Precision::f32);
  load_params(recomputed, g);
  Inputs in = inputs_of(g, false);
  const float loss_r = recomputed.forward(in.batch, o);
  recomputed.backward();
  ::unsetenv("CORETRAIN_RECOMPUTE_ATTENTION_MB");
  EncoderModel kept(g.config, g.head, Precision::f32);
  load_params(kept, g);
  EXPECT_EQ(kept.forward(in.batch, o), loss_r);
  kept.backward();
  EXPECT_EQ(0, std::memcmp(kept.grads_data(), recomputed.grads_data(), kept.num_params() * sizeof(float)));
  EXPECT_LT(recomputed.activation_bytes(), kept.activation_bytes());
}

TEST(ModernBert, Bf16StaysCloseToTheReference) {
  for (const char* stem : kStems) {
    check(stem, Precision::bf16, false);
    check(stem, Precision::bf16, true);
  }
}

// ModernBERT-base's config.json as the Hub has it.
nlohmann::json hub_base_config() {
  return nlohmann::json::parse(R"({
    "architectures": ["ModernBertForMaskedLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 50281, "classifier_activation": "gelu", "classifier_bias": false, "classifier_dropout": 0.0,
    "classifier_pooling": "mean", "cls_token_id": 50281, "decoder_bias": true, "deterministic_flash_attn": false,
    "embedding_dropout": 0.0, "eos_token_id": 50282, "global_attn_every_n_layers": 3, "global_rope_theta": 160000.0,
    "gradient_checkpointing": false, "hidden_activation": "gelu", "hidden_size": 768,
    "initializer_cutoff_factor": 2.0, "initializer_range": 0.02, "intermediate_size": 1152,
    "layer_norm_eps": 1e-05, "local_attention": 128, "local_rope_theta": 10000.0, "max_position_embeddings": 8192,
    "mlp_bias": false, "mlp_dropout": 0.0, "model_type": "modernbert", "norm_bias": false, "norm_eps": 1e-05,
    "num_attention_heads": 12, "num_hidden_layers": 22, "pad_token_id": 50283, "position_embedding_type": "absolute",
    "reference_compile": true, "sep_token_id": 50282, "sparse_pred_ignore_index": -100, "sparse_prediction": false,
    "torch_dtype": "float32", "transformers_version": "4.48.0.dev0", "vocab_size": 50368})");
}

TEST(ModernBert, HubConfigLoadsAndRoundTrips) {
  const ModelConfig c = config_from_json(hub_base_config(), "base/config.json");
  EXPECT_TRUE(c.is_modernbert());
  EXPECT_EQ(c.hidden_size, 768);
  EXPECT_EQ(c.num_hidden_layers, 22);
  EXPECT_EQ(c.intermediate_size, 1152);
  EXPECT_EQ(c.global_attn_every_n_layers, 3);
  EXPECT_EQ(c.local_attention, 128);
  EXPECT_EQ(c.global_rope_theta, 160000.0);
  EXPECT_EQ(c.local_rope_theta, 10000.0);
  EXPECT_EQ(c.classifier_pooling, "mean");
  EXPECT_EQ(c.pad_token_id, 50283);
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-5);
  EXPECT_EQ(head_from_architectures(c, HeadKind::span), HeadKind::masked_lm);
  const auto j = nlohmann::json::parse(config_to_json(c, HeadKind::sequence_classification));
  EXPECT_EQ(j.at("architectures")[0], "ModernBertForSequenceClassification");
  EXPECT_EQ(j.at("bos_token_id"), 50281);  // unknown fields round-trip
  EXPECT_EQ(j.at("norm_bias"), false);
  const ModelConfig back = config_from_json(j, "saved/config.json");
  EXPECT_EQ(back.hidden_size, c.hidden_size);
  EXPECT_EQ(back.local_attention, c.local_attention);
  EXPECT_EQ(back.global_rope_theta, c.global_rope_theta);
  EXPECT_EQ(back.classifier_pooling, c.classifier_pooling);
  EXPECT_EQ(back.intermediate_size, c.intermediate_size);
  EXPECT_EQ(back.hidden_act, c.hidden_act);
  EXPECT_EQ(back.num_labels, 2);
  // Base (22 layers, every third global) has 149,014,272 parameters without a head (HF's count of
  // ModernBertModel); the MLM head adds head.dense, head.norm and decoder.bias.
  const ParamLayout lay = make_param_layout(c, HeadKind::masked_lm);
  EXPECT_EQ(lay.head.begin, 149014272);
  EXPECT_EQ(lay.total - lay.head.begin, 768 * 768 + 768 + 50368);
}

TEST(ModernBert, NewerConfigFieldsMustAgree) {
  auto j = hub_base_config();
  j["num_hidden_layers"] = 4;
  j["layer_types"] = {"full_attention", "sliding_attention", "sliding_attention", "full_attention"};
  j["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}, {"rope_theta", 80000.0}}},
                          {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 5000.0}}}};
  const ModelConfig c = config_from_json(j, "new/config.json");
  EXPECT_EQ(c.global_rope_theta, 80000.0);
  EXPECT_EQ(c.local_rope_theta, 5000.0);
  j["layer_types"][1] = "full_attention";
  EXPECT_THROW(config_from_json(j, "new/config.json"), Error);
}

TEST(ModernBert, UnsupportedOptionsAreRefusedNamingTheField) {
  const std::vector<std::pair<std::string, nlohmann::json>> cases = {
      {"local_attention", 127},         {"norm_bias", true},
      {"attention_bias", true},         {"mlp_bias", true},
      {"classifier_bias", true},        {"decoder_bias", false},
      {"classifier_pooling", "max"},    {"hidden_activation", "swish"},
      {"tie_word_embeddings", false},   {"rope_scaling", {{"rope_type", "linear"}, {"factor", 2.0}}},
      {"global_attn_every_n_layers", 0}};
  for (const auto& [field, value] : cases) {
    auto j = hub_base_config();
    j[field] = value;
    try {
      config_from_json(j, "bad/config.json");
      ADD_FAILURE() << field << ": accepted";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(field), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
  const ModelConfig c = config_from_json(hub_base_config(), "base/config.json");
  ModelConfig in_code = c;  // built in code without the attention pattern
  in_code.global_attn_every_n_layers = 0;
  EXPECT_THROW(make_param_layout(in_code, HeadKind::masked_lm), Error);
}

TEST(ModernBert, InitIsHfTruncatedNormalWithPerModuleStd) {
  auto j = hub_base_config();
  j["hidden_size"] = 64;
  j["num_hidden_layers"] = 2;
  j["num_attention_heads"] = 4;
  j["intermediate_size"] = 96;
  j["vocab_size"] = 500;
  j["pad_token_id"] = 0;
  j["id2label"] = {{"0", "a"}, {"1", "b"}, {"2", "c"}};
  const ModelConfig c = config_from_json(j, "init/config.json");
  EncoderModel m(c, HeadKind::sequence_classification, Precision::f32);
  m.init_weights(7);
  const double out_std = 0.02 / std::sqrt(4.0);
  for (const ParamInfo& p : m.params()) {
    const float* w = m.params_data() + p.offset;
    const int64_t n = p.numel();
    if (p.name.find("norm.weight") != std::string::npos) {
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(w[i], 1.0f) << p.name;
      continue;
    }
    if (p.name == "classifier.bias") {
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(w[i], 0.0f) << p.name;
      continue;
    }
    double sd = 0.02;
    if (p.name.find("Wo.weight") != std::string::npos || p.name == "head.dense.weight") sd = out_std;
    if (p.name == "classifier.weight") sd = 1.0 / 8.0;
    double s2 = 0;
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_LE(std::fabs(w[i]), 2.0 * sd * (1 + 1e-6)) << p.name;
      s2 += static_cast<double>(w[i]) * w[i];
    }
    // A normal truncated at 2 sigma has std 0.880 sigma.
    const double got = std::sqrt(s2 / static_cast<double>(n));
    EXPECT_NEAR(got / sd, 0.880, n > 1000 ? 0.05 : 0.3) << p.name;
  }
  // Same values again for the same seed.
  std::vector<float> first(m.params_data(), m.params_data() + m.num_params());
  m.init_weights(7);
  EXPECT_EQ(0, std::memcmp(first.data(), m.params_data(), first.size() * sizeof(float)));
}

TEST(ModernBert, InferenceWithoutActivationsMatchesTraining) {
  const MbGolden g = load_mb_golden("modernbert_token-cls");
  EncoderModel m(g.config, g.head, Precision::f32);
  load_params(m, g);
  Inputs in = inputs_of(g, false);
  const float loss = m.forward(in.batch, StepOptions{false, 1, 0, {}});
  const std::vector<float> logits = m.logits();
  StepOptions eval{false, 1, 0, {}};
  eval.keep_activations = false;
  EncoderModel m2(g.config, g.head, Precision::f32);
  load_params(m2, g);
  EXPECT_EQ(m2.forward(in.batch, eval), loss);
  EXPECT_EQ(m2.logits(), logits);
  EXPECT_THROW(m2.backward(), Error);
}

// Every dropout on (embeddings, attention probabilities and output, the MLP, the classifier): packed and
// padded training steps draw the same masks for the same tokens, so their logits, loss and gradients agree;
// the per-row keys make a feature's masks independent of the batch it is in.
TEST(ModernBert, TrainModeDropoutGivesPackedThePaddedResult) {
  MbGolden g = load_mb_golden("modernbert_token-cls");
  g.config.hidden_dropout_prob = 0.1;
  g.config.attention_probs_dropout_prob = 0.1;
  g.config.mlp_dropout = 0.1;
  g.config.classifier_dropout = 0.1;
  for (bool row_keys : {false, true}) {
    StepOptions o{true, 17, 3, {}};
    if (row_keys) o.row_keys = {40, 7, 123};
    EncoderModel pad(g.config, g.head, Precision::f32), pk(g.config, g.head, Precision::f32);
    load_params(pad, g);
    load_params(pk, g);
    Inputs ip = inputs_of(g, false), iq = inputs_of(g, true);
    const float lp = pad.forward(ip.batch, o), lq = pk.forward(iq.batch, o);
    EXPECT_NEAR(lp, lq, 1e-5f) << "row_keys=" << row_keys;
    EXPECT_GT(std::fabs(lp - g.file.read_f32("f32.loss").at(0)), 1e-4) << "dropout changed nothing";
    const auto expect = real_rows(g, pad.logits(), false);
    ASSERT_EQ(expect.size(), pk.logits().size());
    for (size_t i = 0; i < expect.size(); ++i) EXPECT_NEAR(pk.logits()[i], expect[i], 1e-5f) << i;
    pad.backward();
    pk.backward();
    for (const ParamInfo& p : pad.params())
      for (int64_t i = 0; i < p.numel(); ++i)
        ASSERT_NEAR(pk.grads_data()[p.offset + i], pad.grads_data()[p.offset + i], 1e-5f)
            << p.name << " " << i;
  }
}

TEST(ModernBert, BackwardReportsEveryParameterOnceAndAccumulates) {
  const MbGolden g = load_mb_golden("modernbert_mlm");
  EncoderModel m(g.config, g.head, Precision::f32);
  load_params(m, g);
  Inputs in = inputs_of(g, true);
  m.forward(in.batch, StepOptions{});
  std::vector<int64_t> offsets;
  m.backward([&](int64_t off, int64_t) { offsets.push_back(off); });
  ASSERT_EQ(offsets.size(), m.params().size());
  for (size_t i = 1; i < offsets.size(); ++i) EXPECT_LT(offsets[i], offsets[i - 1]);
  const std::vector<float> once(m.grads_data(), m.grads_data() + m.num_params());
  m.forward(in.batch, StepOptions{});
  m.backward({}, 1.0f, /*accumulate=*/true);
  for (int64_t i = 0; i < m.num_params(); ++i)
    ASSERT_NEAR(m.grads_data()[i], 2 * once[i], 1e-6f + 1e-5f * std::fabs(once[i]));
}

// Saved under HF names, loaded back exactly; a base-model file (ModernBertModel: no "model." prefix) fills
// the body of a task model, leaving the head to initialize.
TEST(ModernBert, CheckpointRoundTripsUnderHfNames) {
  const MbGolden g = load_mb_golden("modernbert_seq-cls");
  EncoderModel m(g.config, g.head, Precision::f32);
  load_params(m, g);
  const auto dir = std::filesystem::temp_directory_path() / ("ct_modernbert_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "model.safetensors").string();
  save_hf_weights(path, m.params(), m.params_data());
  EncoderModel back(g.config, g.head, Precision::f32);
  const LoadReport r = load_hf_weights(path, back.params(), back.params_data());
  EXPECT_TRUE(r.missing.empty());
  EXPECT_TRUE(r.unexpected.empty());
  EXPECT_EQ(0, std::memcmp(m.params_data(), back.params_data(), m.num_params() * sizeof(float)));
  std::vector<ParamInfo> base;
  for (const ParamInfo& p : m.params())
    if (p.name.rfind("model.", 0) == 0) {
      base.push_back(p);
      base.back().name = p.name.substr(6);
    }
  const std::string base_path = (dir / "base.safetensors").string();
  save_hf_weights(base_path, base, m.params_data());
  EncoderModel task(g.config, g.head, Precision::f32);
  const LoadReport rb = load_hf_weights(base_path, task.params(), task.params_data());
  EXPECT_EQ(check_missing(rb, task.layout().head_param_names()), task.layout().head_param_names());
  EXPECT_EQ(0, std::memcmp(m.params_data(), task.params_data(), task.layout().head.begin * sizeof(float)));
  std::filesystem::remove_all(dir);
}

// From scratch (HF init) a few plain gradient steps on one batch lower its loss: forward, backward and the
// init fit together, with every dropout on, packed.
TEST(ModernBert, TrainsFromScratch) {
  MbGolden g = load_mb_golden("modernbert_token-cls-long");
  g.config.hidden_dropout_prob = g.config.attention_probs_dropout_prob = g.config.mlp_dropout = 0.05;
  EncoderModel m(g.config, g.head, Precision::f32);
  m.init_weights(3);
  Inputs in = inputs_of(g, true);
  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    const float loss = m.forward(in.batch, StepOptions{true, 5, static_cast<uint64_t>(step), {}});
    m.backward();
    float* w = m.params_data();
    for (int64_t i = 0; i < m.num_params(); ++i) w[i] -= 0.05f * m.grads_data()[i];
    (step == 0 ? first : last) = loss;
  }
  EXPECT_LT(last, 0.7f * first) << first << " -> " << last;
}

// ModernBERT-large's config as the Hub has it loads unedited (395M parameters with the MLM head); model FLOPs
// count local layers over their band.
TEST(ModernBert, LargeConfigAndFlops) {
  auto j = hub_base_config();
  j["hidden_size"] = 1024;
  j["num_hidden_layers"] = 28;
  j["num_attention_heads"] = 16;
  j["intermediate_size"] = 2624;
  const ModelConfig c = config_from_json(j, "large/config.json");
  const ParamLayout lay = make_param_layout(c, HeadKind::masked_lm);
  EXPECT_EQ(lay.head.begin, 394781696);
  // 2 layers (global, local), window 1 each side, one sequence of 5: the local layer sees 13 keys in all.
  ModelConfig t = config_from_json(hub_base_config(), "base/config.json");
  t.num_hidden_layers = 2;
  t.global_attn_every_n_layers = 2;
  t.local_attention = 2;
  const std::vector<int64_t> lens = {5};
  const double H = 768, I = 1152;
  const double linear = 2 * (2 * H * 3 * H + 2 * H * H + 2 * H * 2 * I + 2 * I * H) + 2 * H * 2;
  EXPECT_DOUBLE_EQ(forward_matmul_flops(t, lens), 5 * linear + 4 * 25 * H + 4 * 13 * H);
}

}  // namespace
}  // namespace ct::model

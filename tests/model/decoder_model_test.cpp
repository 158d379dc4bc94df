// The decoder body + causal-LM head against the plain-PyTorch reference of tools/make_decoder_golden.py
// (after transformers' modeling code, eager attention, ForCausalLMLoss) on two packed sequences: logits of
// every row, the loss, and every parameter's gradient, for llama (untied), llama with llama3 RoPE and every
// bias, mistral (sliding window on every layer), qwen2 (q/k/v biases), qwen3 (q/k norms, head_dim != hidden /
// heads) and gemma3_text (sandwich norms, 1 + w, embedding and score scales, sliding and full layers with
// their RoPEs).
#include "model/decoder_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/safetensors.h"

namespace ct::model {
namespace {

const std::string kGolden = std::string(CORETRAIN_SOURCE_DIR) + "/tests/model/data/golden/";

std::vector<int32_t> ints(const SafetensorsFile& f, const std::string& name) {
  const auto& t = f.at(name);
  const auto b = f.bytes(t);
  std::vector<int32_t> v(t.numel());
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

double worst_rel(const std::vector<float>& got, const std::vector<float>& want, double atol) {
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]) / (atol + std::fabs(want[i])));
  return worst;
}

class DecoderGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(DecoderGolden, LogitsLossAndGradientsEqualTorch) {
  const SafetensorsFile f = SafetensorsFile::open(kGolden + "tiny_" + GetParam() + "_clm.safetensors");
  const DecoderConfig c =
      decoder_config_from_json(nlohmann::json::parse(f.metadata().at("config")), GetParam());
  DecoderModel m(c, 64);
  for (const ParamInfo& p : m.layout().params) {
    const auto& t = f.at(p.name);
    ASSERT_EQ(t.shape, p.shape) << p.name;
    f.read_f32(t, m.params().data() + p.offset);
  }
  // Every tensor of the reference is a parameter of the layout: no name is missing or extra.
  int64_t reference_params = 0;
  for (const auto& t : f.tensors())
    if (t.name.rfind("model.", 0) == 0 || t.name == "lm_head.weight") ++reference_params;
  EXPECT_EQ(reference_params, static_cast<int64_t>(m.layout().params.size()));

  const std::vector<int32_t> ids = ints(f, "input_ids"), pos = ints(f, "position_ids"),
                             labels = ints(f, "labels"), lens = ints(f, "seq_lens");
  DecoderBatch b;
  b.rows = static_cast<int64_t>(ids.size());
  b.input_ids = ids.data();
  b.position_ids = pos.data();
  for (int32_t n : lens) {
    b.seq_start.push_back(b.seq_start.empty() ? 0 : b.seq_start.back() + b.seq_len.back());
    b.seq_len.push_back(n);
  }
  const std::vector<int32_t> targets = shift_labels(labels.data(), b.seq_start, b.seq_len, b.rows);
  b.targets = targets.data();
  int64_t count = 0;
  for (int32_t t : targets) count += t >= 0;

  std::vector<float> logits(b.rows * c.vocab_size);
  m.logits(b, logits.data());
  const std::vector<float> want_logits = f.read_f32("logits");
  double max_logit = 0.0, max_diff = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    max_logit = std::max(max_logit, static_cast<double>(std::fabs(want_logits[i])));
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(logits[i] - want_logits[i])));
  }
  // f32 sums in another order: a few ulp of the largest logit.
  EXPECT_LE(max_diff, 2e-6 * max_logit) << "logits (largest " << max_logit << ")";

  const kernels::LmHeadLossSums s = m.step(b, 1.0f / static_cast<float>(count), true);
  const float want_loss = f.read_f32("loss")[0];
  EXPECT_NEAR(s.nll / static_cast<double>(count), want_loss, 2e-5 * want_loss);
  for (const ParamInfo& p : m.layout().params) {
    const std::vector<float> want = f.read_f32("grad." + p.name);
    const std::vector<float> got(m.grads().begin() + p.offset, m.grads().begin() + p.offset + p.numel());
    double scale = 0.0;
    for (float w : want) scale = std::max(scale, static_cast<double>(std::fabs(w)));
    // Relative to the tensor's largest gradient: f32 sums in another order.
    EXPECT_LE(worst_rel(got, want, 1e-3 * scale + 1e-7), 2e-3) << p.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, DecoderGolden,
                         ::testing::Values("llama", "llama3_rope", "mistral", "qwen2", "qwen3",
                                           "gemma3_text"));

TEST(DecoderModel, PackedSequenceEqualsItAlone) {
  const SafetensorsFile f = SafetensorsFile::open(kGolden + "tiny_qwen3_clm.safetensors");
  const DecoderConfig c = decoder_config_from_json(nlohmann::json::parse(f.metadata().at("config")), "qwen3");
  DecoderModel m(c, 64);
  for (const ParamInfo& p : m.layout().params) f.read_f32(f.at(p.name), m.params().data() + p.offset);
  const std::vector<int32_t> ids = ints(f, "input_ids"), pos = ints(f, "position_ids"),
                             lens = ints(f, "seq_lens");
  DecoderBatch packed;
  packed.rows = static_cast<int64_t>(ids.size());
  packed.input_ids = ids.data();
  packed.position_ids = pos.data();
  packed.seq_start = {0, lens[0]};
  packed.seq_len = {lens[0], lens[1]};
  std::vector<float> all(packed.rows * c.vocab_size);
  m.logits(packed, all.data());
  DecoderBatch second;
  second.rows = lens[1];
  second.input_ids = ids.data() + lens[0];
  second.position_ids = pos.data() + lens[0];
  second.seq_start = {0};
  second.seq_len = {lens[1]};
  std::vector<float> alone(second.rows * c.vocab_size);
  m.logits(second, alone.data());
  for (int64_t i = 0; i < second.rows * c.vocab_size; ++i)
    EXPECT_NEAR(all[lens[0] * c.vocab_size + i], alone[i], 1e-5) << i;
}

// Recomputing each layer in backward is the same arithmetic: the same loss and gradients, bit for bit.
TEST(DecoderModel, GradientCheckpointingChangesNothing) {
  for (const char* family : {"gemma3_text", "qwen2"}) {
    const SafetensorsFile f =
        SafetensorsFile::open(kGolden + "tiny_" + std::string(family) + "_clm.safetensors");
    const DecoderConfig c =
        decoder_config_from_json(nlohmann::json::parse(f.metadata().at("config")), family);
    DecoderModel plain(c, 64), ckpt(c, 64);
    for (const ParamInfo& p : plain.layout().params) {
      f.read_f32(f.at(p.name), plain.params().data() + p.offset);
      f.read_f32(f.at(p.name), ckpt.params().data() + p.offset);
    }
    ckpt.set_gradient_checkpointing(true);
    const std::vector<int32_t> ids = ints(f, "input_ids"), pos = ints(f, "position_ids"),
                               labels = ints(f, "labels"), lens = ints(f, "seq_lens");
    DecoderBatch b;
    b.rows = static_cast<int64_t>(ids.size());
    b.input_ids = ids.data();
    b.position_ids = pos.data();
    b.seq_start = {0, lens[0]};
    b.seq_len = {lens[0], lens[1]};
    const std::vector<int32_t> targets = shift_labels(labels.data(), b.seq_start, b.seq_len, b.rows);
    b.targets = targets.data();
    EXPECT_EQ(plain.step(b, 0.1f, true).nll, ckpt.step(b, 0.1f, true).nll) << family;
    EXPECT_EQ(plain.grads(), ckpt.grads()) << family;
  }
}

TEST(DecoderModel, Gpt2AndBadBatchesAreErrors) {
  const DecoderConfig g =
      decoder_config_from_json(nlohmann::json::parse(R"({"model_type": "gpt2", "n_layer": 1,
    "n_embd": 8, "n_head": 2, "vocab_size": 10})"),
                               "config.json");
  EXPECT_THROW(DecoderModel(g, 8), Error);
  const SafetensorsFile f = SafetensorsFile::open(kGolden + "tiny_llama_clm.safetensors");
  DecoderModel m(decoder_config_from_json(nlohmann::json::parse(f.metadata().at("config")), "llama"), 64);
  const int32_t ids[2] = {1, 99}, pos[2] = {0, 1};
  DecoderBatch b;
  b.rows = 2;
  b.input_ids = ids;
  b.position_ids = pos;
  b.seq_start = {0};
  b.seq_len = {2};
  std::vector<float> out(2 * 61);
  try {
    m.logits(b, out.data());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input_ids[1] = 99 outside the vocabulary"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ct::model

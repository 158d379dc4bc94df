// A decoder's folder round trip (config.json as read plus the engine's keys, model.safetensors with HF names,
// no lm_head when tied), loading a checkpoint whose names lack the base prefix or carry extra tensors, the
// missing-tensor error, and transformers' init for a model trained from scratch.
#include "model/decoder_io.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "core/fs.h"
#include "model/safetensors.h"

namespace ct::model {
namespace {

const std::string kGolden = std::string(CORETRAIN_SOURCE_DIR) + "/tests/model/data/golden/";

DecoderModel golden_model(const std::string& family) {
  const SafetensorsFile f = SafetensorsFile::open(kGolden + "tiny_" + family + "_clm.safetensors");
  DecoderModel m(decoder_config_from_json(nlohmann::json::parse(f.metadata().at("config")), family), 32);
  load_decoder_weights(m, kGolden + "tiny_" + family + "_clm.safetensors");
  return m;
}

std::string fresh(const std::string& name) {
  const std::string d = ::testing::TempDir() + "decoder_io_" + name;
  std::filesystem::remove_all(d);
  return d;
}

TEST(DecoderIo, SaveAndLoadRoundTrip) {
  for (const char* family : {"llama", "gemma3_text"}) {
    DecoderModel m = golden_model(family);
    const std::string dir = fresh(family);
    save_decoder(m, dir);
    const SafetensorsFile saved = SafetensorsFile::open(dir + "/model.safetensors");
    EXPECT_EQ(saved.metadata().at("format"), "pt");
    EXPECT_EQ(saved.find("lm_head.weight") != nullptr, !m.config().tie_word_embeddings) << family;
    const DecoderConfig back = load_decoder_config(dir + "/config.json");
    EXPECT_EQ(back.file["architectures"][0], decoder_architecture(m.config()));
    EXPECT_EQ(back.num_layers, m.config().num_layers);
    EXPECT_EQ(back.file.value("rms_norm_eps", 0.0), m.config().norm_eps);
    DecoderModel again(back, 32);
    load_decoder_weights(again, dir + "/model.safetensors");
    EXPECT_EQ(again.params(), m.params()) << family;
  }
}

TEST(DecoderIo, MissingTensorIsAnErrorAndExtrasAreSkipped) {
  const DecoderModel m = golden_model("llama");  // untied: lm_head.weight is a parameter
  std::vector<ParamInfo> without_head;
  for (const ParamInfo& p : m.layout().params)
    if (p.name != "lm_head.weight") without_head.push_back(p);
  const std::string dir = fresh("missing");
  std::filesystem::create_directories(dir);
  save_hf_weights(dir + "/model.safetensors", without_head, m.params().data());
  DecoderModel target(m.config(), 32);
  try {
    load_decoder_weights(target, dir + "/model.safetensors");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lm_head.weight"), std::string::npos) << e.what();
  }
  // A tied model reading a file that also holds the tied copy: skipped, listed.
  DecoderModel tied = golden_model("qwen3");
  std::vector<ParamInfo> with_copy = tied.layout().params;
  ParamInfo copy = with_copy.front();  // model.embed_tokens.weight's bytes under lm_head's name
  copy.name = "lm_head.weight";
  with_copy.push_back(copy);
  save_hf_weights(dir + "/tied.safetensors", with_copy, tied.params().data());
  DecoderModel t2(tied.config(), 32);
  const LoadReport r = load_decoder_weights(t2, dir + "/tied.safetensors");
  EXPECT_EQ(r.unexpected, (std::vector<std::string>{"lm_head.weight"}));
  EXPECT_EQ(t2.params(), tied.params());
}

TEST(DecoderIo, FromScratchInitAsTransformers) {
  DecoderConfig c =
      decoder_config_from_json(nlohmann::json::parse(R"({"model_type": "qwen2", "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    "vocab_size": 300, "initializer_range": 0.05})"),
                               "config.json");
  DecoderModel m(c, 16), n(c, 16);
  init_decoder_weights(m, 42);
  init_decoder_weights(n, 42);
  EXPECT_EQ(m.params(), n.params());
  const DecoderLayout& l = m.layout();
  EXPECT_EQ(m.params()[l.final_norm], 1.0f);
  EXPECT_EQ(m.params()[l.layers[1].qkv_b], 0.0f);
  double sum = 0, sq = 0;
  const int64_t count = 300 * 64;
  for (int64_t i = 0; i < count; ++i) {
    sum += m.params()[l.embed + i];
    sq += m.params()[l.embed + i] * m.params()[l.embed + i];
  }
  EXPECT_NEAR(sum / count, 0.0, 0.002);
  EXPECT_NEAR(std::sqrt(sq / count), 0.05, 0.002);
  c = decoder_config_from_json(nlohmann::json::parse(R"({"model_type": "gemma3_text", "hidden_size": 32,
    "intermediate_size": 48, "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 50})"),
                               "config.json");
  DecoderModel g(c, 16);
  init_decoder_weights(g, 1);
  EXPECT_EQ(g.params()[g.layout().final_norm], 0.0f);  // Gemma's norms are zero-centred
}

}  // namespace
}  // namespace ct::model

// HF checkpoint load/save against the real model's slab layout: round trips, from_pretrained's name rules
// (gamma/beta, base-model prefix, skipped heads), dtype conversion, and every rejected input.
#include "model/checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>

#include <nlohmann/json.hpp>

#include "core/bf16.h"
#include "core/error.h"
#include "core/fs.h"
#include "model/param_layout.h"
#include "model/safetensors.h"

namespace ct::model {
namespace {

namespace stdfs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

stdfs::path temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir = stdfs::temp_directory_path() /
             str("ct_ckpt_", ::getpid(), "_", info->test_suite_name(), "_", info->name());
  stdfs::remove_all(dir);
  stdfs::create_directories(dir);
  return dir;
}

ModelConfig tiny(const std::string& type) {
  ModelConfig c;
  c.model_type = type;
  c.vocab_size = 23;
  c.hidden_size = 8;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 12;
  c.max_position_embeddings = 16;
  c.type_vocab_size = type == "bert" ? 2 : 0;
  return c;
}

std::vector<float> random_slab(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(gen);
  return v;
}

// A file whose tensors are the layout's, renamed by `rename` (empty result: leave the tensor out), plus
// `more`.
void write_variant(const std::string& path, const ParamLayout& layout, const std::vector<float>& slab,
                   const std::function<std::string(const std::string&)>& rename,
                   std::vector<SafetensorWrite> more = {}) {
  std::vector<SafetensorWrite> t;
  for (const auto& p : layout.params) {
    const std::string name = rename(p.name);
    if (!name.empty()) t.push_back({name, "F32", p.shape, slab.data() + p.offset});
  }
  for (auto& m : more) t.push_back(m);
  write_safetensors(path, t);
}

void expect_error(const std::function<void()>& fn, std::initializer_list<std::string> fragments) {
  try {
    fn();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (std::getenv("CT_SHOW_ERRORS")) std::printf("%s\n", msg.c_str());
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    for (const auto& f : fragments) EXPECT_THAT(msg, HasSubstr(f));
  }
}

std::string replace_suffix(const std::string& s, const std::string& from, const std::string& to) {
  if (s.size() >= from.size() && s.compare(s.size() - from.size(), from.size(), from) == 0)
    return s.substr(0, s.size() - from.size()) + to;
  return s;
}

TEST(Checkpoint, RoundTripBertAndDistilBertUnderHfNames) {
  const auto dir = temp_dir();
  for (const char* type : {"bert", "distilbert"}) {
    const auto layout = make_param_layout(tiny(type));
    const auto slab = random_slab(layout.total, 1);
    const std::string path = (dir / str(type, ".safetensors")).string();
    save_hf_weights(path, layout.params, slab.data());

    // The file holds exactly the HF names and shapes, as F32, with HF metadata.
    const auto f = SafetensorsFile::open(path);
    EXPECT_EQ(f.metadata().at("format"), "pt");
    EXPECT_EQ(f.tensors().size(), layout.params.size());
    for (const auto& p : layout.params) {
      const auto& t = f.at(p.name);
      EXPECT_EQ(t.dtype, "F32");
      EXPECT_EQ(t.shape, p.shape) << p.name;
    }
    const std::string prefix = std::string(type) + ".";
    EXPECT_NE(f.find(prefix + "embeddings.word_embeddings.weight"), nullptr);
    EXPECT_NE(f.find("qa_outputs.weight"), nullptr);
    if (std::string(type) == "bert") {
      EXPECT_EQ(f.at("bert.encoder.layer.1.attention.self.query.weight").shape, (Shape{8, 8}));
      EXPECT_EQ(f.at("bert.encoder.layer.0.intermediate.dense.weight").shape, (Shape{12, 8}));
      EXPECT_EQ(f.at("bert.embeddings.token_type_embeddings.weight").shape, (Shape{2, 8}));
    } else {
      EXPECT_EQ(f.at("distilbert.transformer.layer.1.attention.q_lin.weight").shape, (Shape{8, 8}));
      EXPECT_EQ(f.at("distilbert.transformer.layer.0.ffn.lin2.weight").shape, (Shape{8, 12}));
    }

    std::vector<float> back(slab.size(), -99.0f);
    const auto report = load_hf_weights(path, layout.params, back.data());
    EXPECT_EQ(back, slab);
    EXPECT_EQ(report.loaded.size(), layout.params.size());
    EXPECT_TRUE(report.missing.empty());
    EXPECT_TRUE(report.unexpected.empty());
    EXPECT_TRUE(report.renamed.empty());
    EXPECT_EQ(report.source, path);
    EXPECT_TRUE(check_missing(report).empty());
  }
  stdfs::remove_all(dir);
}

TEST(Checkpoint, OldLayerNormGammaBetaMapToWeightBias) {
  const auto dir = temp_dir();
  const auto layout = make_param_layout(tiny("bert"));
  const auto slab = random_slab(layout.total, 2);
  const std::string path = (dir / "old.safetensors").string();
  // Only LayerNorm keys are renamed; a non-LayerNorm "gamma" stays an unknown tensor.
  const std::vector<float> g = {1.0f};
  write_variant(path, layout, slab,
                [](const std::string& n) {
                  return replace_suffix(replace_suffix(n, "LayerNorm.weight", "LayerNorm.gamma"),
                                        "LayerNorm.bias", "LayerNorm.beta");
                },
                {{"bert.encoder.layer.0.attention.self.gamma", "F32", {1}, g.data()}});
  std::vector<float> back(slab.size(), 0.0f);
  const auto report = load_hf_weights(path, layout.params, back.data());
  EXPECT_EQ(back, slab);
  EXPECT_TRUE(report.missing.empty());
  EXPECT_THAT(report.unexpected, ElementsAre("bert.encoder.layer.0.attention.self.gamma"));
  // Embeddings + 2 per layer, weight and bias each.
  EXPECT_EQ(report.renamed.size(), 2u * (1 + 2 * 2));
  EXPECT_NE(std::find(report.renamed.begin(), report.renamed.end(),
                      std::make_pair(std::string("bert.embeddings.LayerNorm.gamma"),
                                     std::string("bert.embeddings.LayerNorm.weight"))),
            report.renamed.end());
  EXPECT_NE(std::find(report.renamed.begin(), report.renamed.end(),
                      std::make_pair(std::string("bert.encoder.layer.1.output.LayerNorm.beta"),
                                     std::string("bert.encoder.layer.1.output.LayerNorm.bias"))),
            report.renamed.end());
  EXPECT_TRUE(check_missing(report).empty());

  // Both spellings of one parameter is ambiguous: refused.
  write_variant(path, layout, slab, [](const std::string& n) { return n; },
                {{"bert.embeddings.LayerNorm.gamma", "F32", {8}, slab.data()}});
  expect_error([&] { load_hf_weights(path, layout.params, back.data()); },
               {path, "bert.embeddings.LayerNorm.gamma", "bert.embeddings.LayerNorm.weight", "both map"});
  stdfs::remove_all(dir);
}

TEST(Checkpoint, PretrainingHeadsAreSkippedAndListed) {
  const auto dir = temp_dir();
  const auto layout = make_param_layout(tiny("bert"));
  const auto slab = random_slab(layout.total, 3);
  const std::string path = (dir / "pretrained.safetensors").string();
  // What a Hub bert-base-uncased file carries beyond the QA model: pooler, MLM and NSP heads, position_ids.
  const std::vector<float> pool(8 * 8, 0.5f), nsp(2 * 8, 0.25f), bias(23, 0.125f);
  const std::vector<int64_t> pos_ids(16, 3);
  write_variant(path, layout, slab,
                [](const std::string& n) { return n.rfind("qa_outputs.", 0) == 0 ? std::string() : n; },
                {{"bert.pooler.dense.weight", "F32", {8, 8}, pool.data()},
                 {"bert.pooler.dense.bias", "F32", {8}, pool.data()},
                 {"cls.predictions.bias", "F32", {23}, bias.data()},
                 {"cls.seq_relationship.weight", "F32", {2, 8}, nsp.data()},
                 {"bert.embeddings.position_ids", "I64", {1, 16}, pos_ids.data()}});
  std::vector<float> back(slab.size(), 7.0f);
  const auto report = load_hf_weights(path, layout.params, back.data());
  EXPECT_THAT(report.unexpected, UnorderedElementsAre("bert.pooler.dense.weight", "bert.pooler.dense.bias",
                                                      "cls.predictions.bias", "cls.seq_relationship.weight",
                                                      "bert.embeddings.position_ids"));
  EXPECT_THAT(report.missing, UnorderedElementsAre("qa_outputs.weight", "qa_outputs.bias"));
  // The head is left for the caller to initialize; everything else loaded.
  EXPECT_THAT(check_missing(report), UnorderedElementsAre("qa_outputs.weight", "qa_outputs.bias"));
  for (const auto& p : layout.params)
    for (int64_t i = 0; i < p.numel(); ++i) {
      const float expect = p.name.rfind("qa_outputs.", 0) == 0 ? 7.0f : slab[p.offset + i];
      ASSERT_EQ(back[p.offset + i], expect) << p.name;
    }
  stdfs::remove_all(dir);
}

TEST(Checkpoint, BaseModelWithoutPrefixLoads) {
  const auto dir = temp_dir();
  for (const char* type : {"bert", "distilbert"}) {
    const auto layout = make_param_layout(tiny(type));
    const auto slab = random_slab(layout.total, 4);
    const std::string path = (dir / str(type, "_base.safetensors")).string();
    const std::string prefix = std::string(type) + ".";
    // Saved from BertModel / DistilBertModel: no prefix, no QA head.
    write_variant(path, layout, slab, [&](const std::string& n) {
      return n.rfind(prefix, 0) == 0 ? n.substr(prefix.size()) : std::string();
    });
    EXPECT_NE(SafetensorsFile::open(path).find("embeddings.word_embeddings.weight"), nullptr);
    std::vector<float> back(slab.size(), 0.0f);
    const auto report = load_hf_weights(path, layout.params, back.data());
    EXPECT_THAT(report.missing, UnorderedElementsAre("qa_outputs.weight", "qa_outputs.bias"));
    EXPECT_TRUE(report.unexpected.empty());
    EXPECT_EQ(report.loaded.size(), layout.params.size() - 2);
    EXPECT_EQ(check_missing(report).size(), 2u);
    for (const auto& p : layout.params) {
      if (p.name.rfind("qa_outputs.", 0) == 0) continue;
      for (int64_t i = 0; i < p.numel(); ++i) ASSERT_EQ(back[p.offset + i], slab[p.offset + i]) << p.name;
    }
  }
  // And the other way: a base model's parameter list (no prefix) takes a task-model file's prefixed names.
  const auto layout = make_param_layout(tiny("bert"));
  const auto slab = random_slab(layout.total, 5);
  const std::string path = (dir / "task.safetensors").string();
  save_hf_weights(path, layout.params, slab.data());
  std::vector<ParamInfo> base;
  for (auto p : layout.params)
    if (p.name.rfind("bert.", 0) == 0) {
      p.name = p.name.substr(5);
      base.push_back(p);
    }
  std::vector<float> back(slab.size(), 0.0f);
  const auto report = load_hf_weights(path, base, back.data());
  EXPECT_TRUE(report.missing.empty());
  EXPECT_THAT(report.unexpected, UnorderedElementsAre("qa_outputs.weight", "qa_outputs.bias"));
  stdfs::remove_all(dir);
}

TEST(Checkpoint, MissingEncoderTensorIsAnError) {
  const auto dir = temp_dir();
  const auto layout = make_param_layout(tiny("bert"));
  const auto slab = random_slab(layout.total, 6);
  const std::string path = (dir / "holes.safetensors").string();
  write_variant(path, layout, slab, [](const std::string& n) {
    return n == "bert.encoder.layer.1.attention.self.key.bias" ? std::string() : n;
  });
  std::vector<float> back(slab.size());
  const auto report = load_hf_weights(path, layout.params, back.data());
  EXPECT_THAT(report.missing, ElementsAre("bert.encoder.layer.1.attention.self.key.bias"));
  expect_error([&] { check_missing(report); },
               {path, "missing 1 of", "bert.encoder.layer.1.attention.self.key.bias"});

  // A DistilBERT file for a BERT model: nothing matches; the message says so.
  const auto dlayout = make_param_layout(tiny("distilbert"));
  const auto dslab = random_slab(dlayout.total, 7);
  save_hf_weights(path, dlayout.params, dslab.data());
  const auto wrong = load_hf_weights(path, layout.params, back.data());
  expect_error([&] { check_missing(wrong); }, {path, "another model_type"});
  stdfs::remove_all(dir);
}

TEST(Checkpoint, ShapeMismatchNamesTensorAndShapes) {
  const auto dir = temp_dir();
  // Weights of a model with intermediate_size 12 against a config that says 16.
  const auto layout = make_param_layout(tiny("bert"));
  const auto slab = random_slab(layout.total, 8);
  const std::string path = (dir / "m.safetensors").string();
  save_hf_weights(path, layout.params, slab.data());
  auto bigger = tiny("bert");
  bigger.intermediate_size = 16;
  const auto other = make_param_layout(bigger);
  std::vector<float> back(other.total, 5.0f);
  expect_error(
      [&] { load_hf_weights(path, other.params, back.data()); },
      {path, "tensor \"bert.encoder.layer.0.intermediate.dense.bias\" has shape [12]", "expects [16]"});
  // Nothing was written into the slab.
  EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](float x) { return x == 5.0f; }));
  stdfs::remove_all(dir);
}

TEST(Checkpoint, HalfPrecisionTensorsConvertToF32) {
  const auto dir = temp_dir();
  const auto layout = make_param_layout(tiny("distilbert"));
  auto slab = random_slab(layout.total, 9);
  // bf16 file: values that are exact in bf16 survive unchanged.
  for (auto& x : slab) x = round_bf16(x);
  std::vector<uint16_t> bits(slab.size());
  for (size_t i = 0; i < slab.size(); ++i) bits[i] = f32_to_bf16_bits(slab[i]);
  std::vector<SafetensorWrite> t;
  for (const auto& p : layout.params) t.push_back({p.name, "BF16", p.shape, bits.data() + p.offset});
  const std::string path = (dir / "bf16.safetensors").string();
  write_safetensors(path, t);
  std::vector<float> back(slab.size(), 0.0f);
  EXPECT_TRUE(load_hf_weights(path, layout.params, back.data()).missing.empty());
  EXPECT_EQ(back, slab);

  // F16 file: small integers are exact in half precision.
  std::vector<uint16_t> half(slab.size());
  std::vector<float> expect(slab.size());
  for (size_t i = 0; i < slab.size(); ++i) {
    const int v = static_cast<int>(i % 9) - 4;  // -4..4
    expect[i] = static_cast<float>(v);
    // IEEE half of a small integer: sign, exponent 15+e, 10-bit mantissa.
    uint16_t h = 0;
    if (v != 0) {
      int a = v < 0 ? -v : v, e = 0;
      while ((a >> e) > 1) ++e;
      h = static_cast<uint16_t>(((15 + e) << 10) | (((a << 10) >> e) & 0x3ff));
      if (v < 0) h |= 0x8000;
    }
    half[i] = h;
  }
  t.clear();
  for (const auto& p : layout.params) t.push_back({p.name, "F16", p.shape, half.data() + p.offset});
  write_safetensors(path, t);
  load_hf_weights(path, layout.params, back.data());
  EXPECT_EQ(back, expect);

  // Integer weights are refused, naming the tensor and the dtype.
  std::vector<int32_t> ints(slab.size(), 1);
  t.clear();
  for (const auto& p : layout.params) t.push_back({p.name, "I32", p.shape, ints.data() + p.offset});
  write_safetensors(path, t);
  expect_error([&] { load_hf_weights(path, layout.params, back.data()); }, {path, "distilbert.", "I32"});
  stdfs::remove_all(dir);
}

TEST(Checkpoint, MalformedOrTruncatedFileIsAnError) {
  const auto dir = temp_dir();
  const auto layout = make_param_layout(tiny("bert"));
  const auto slab = random_slab(layout.total, 10);
  const std::string path = (dir / "m.safetensors").string();
  save_hf_weights(path, layout.params, slab.data());
  std::string bytes = fs::read_file(path);
  bytes.resize(bytes.size() - 100);
  fs::write_file_atomic(path, bytes);
  std::vector<float> back(slab.size());
  expect_error([&] { load_hf_weights(path, layout.params, back.data()); }, {path, "truncated"});
  expect_error([&] { load_hf_weights((dir / "none.safetensors").string(), layout.params, back.data()); },
               {"none.safetensors"});
  stdfs::remove_all(dir);
}

TEST(Checkpoint, SaveIsAtomicAndReplaces) {
  const auto dir = temp_dir();
  const auto layout = make_param_layout(tiny("bert"));
  const auto a = random_slab(layout.total, 11), b = random_slab(layout.total, 12);
  const std::string path = (dir / "model.safetensors").string();
  save_hf_weights(path, layout.params, a.data());
  save_hf_weights(path, layout.params, b.data());
  std::vector<float> back(b.size());
  load_hf_weights(path, layout.params, back.data());
  EXPECT_EQ(back, b);
  int entries = 0;
  for (const auto& e : stdfs::directory_iterator(dir)) entries += e.is_regular_file();
  EXPECT_EQ(entries, 1);
  expect_error(
      [&] { save_hf_weights((dir / "nope" / "model.safetensors").string(), layout.params, a.data()); },
      {"nope/model.safetensors"});
  stdfs::remove_all(dir);
}

TEST(Checkpoint, FindsTheWeightsFileOfAModelFolder) {
  const auto dir = temp_dir();
  const auto model = dir / "model";
  stdfs::create_directories(model);
  expect_error([&] { find_weights_file(model.string()); }, {model.string(), "no model.safetensors"});
  expect_error([&] { find_weights_file((dir / "absent").string()); }, {"absent", "no such"});

  fs::write_file_atomic((model / "pytorch_model.bin").string(), "PK");
  expect_error([&] { find_weights_file(model.string()); },
               {model.string(), "pytorch_model.bin", "safetensors only"});
  expect_error([&] { find_weights_file((model / "pytorch_model.bin").string()); },
               {"pytorch_model.bin", "safetensors only"});

  fs::write_file_atomic((model / "model.safetensors.index.json").string(), "{}");
  EXPECT_EQ(find_weights_file(model.string()), (model / "model.safetensors.index.json").string());
  expect_error([&] { safetensors_shards((model / "model.safetensors.index.json").string()); },
               {"weight_map"});

  fs::write_file_atomic((model / "model.safetensors").string(), "x");
  EXPECT_EQ(find_weights_file(model.string()), (model / "model.safetensors").string());
  EXPECT_EQ(find_weights_file((model / "model.safetensors").string()),
            (model / "model.safetensors").string());
  stdfs::remove_all(dir);
}

// A sharded checkpoint (model.safetensors.index.json + shards, as save_pretrained writes big models) loads
// the same as the single file; a broken index or a tensor in two shards is refused.
TEST(Checkpoint, LoadsShardedSafetensors) {
  const auto dir = temp_dir();
  const auto layout = make_param_layout(tiny("bert"));
  const auto slab = random_slab(layout.total, 7);
  nlohmann::json index = {{"metadata", {{"total_size", layout.total * 4}}},
                          {"weight_map", nlohmann::json::object()}};
  std::vector<SafetensorWrite> a, b;
  for (size_t i = 0; i < layout.params.size(); ++i) {
    const auto& p = layout.params[i];
    const bool first = i < layout.params.size() / 2;
    (first ? a : b).push_back({p.name, "F32", p.shape, slab.data() + p.offset});
    index["weight_map"][p.name] =
        first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  write_safetensors((dir / "model-00001-of-00002.safetensors").string(), a);
  write_safetensors((dir / "model-00002-of-00002.safetensors").string(), b);
  const std::string idx = (dir / "model.safetensors.index.json").string();
  fs::write_file_atomic(idx, index.dump(2));
  EXPECT_EQ(find_weights_file(dir.string()), idx);
  EXPECT_THAT(safetensors_shards(idx),
              ElementsAre("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"));
  std::vector<float> back(slab.size(), -1.0f);
  const auto report = load_hf_weights(idx, layout.params, back.data());
  EXPECT_EQ(back, slab);
  EXPECT_TRUE(report.missing.empty());
  EXPECT_EQ(report.loaded.size(), layout.params.size());
  // A tensor in both shards.
  write_safetensors((dir / "model-00002-of-00002.safetensors").string(),
                    {b[0], {a[0].name, "F32", a[0].shape, a[0].data}});
  expect_error([&] { load_hf_weights(idx, layout.params, back.data()); }, {"both map to parameter"});
  index["weight_map"]["x"] = "../elsewhere.safetensors";
  fs::write_file_atomic(idx, index.dump(2));
  expect_error([&] { load_hf_weights(idx, layout.params, back.data()); }, {idx, "../elsewhere.safetensors"});
  stdfs::remove_all(dir);
}

}  // namespace
}  // namespace ct::model

// run_qa's features from tokenizer.json pipelines against HF: goldens/qa_features/golden_<variant>.json hold
// what run_qa.py's prepare_train_features / prepare_validation_features give with HF's own fast tokenizer
// (tools/make_qa_features_golden.js) on examples.json: a RoBERTa-shaped byte-level BPE (trim_offsets), an
// XLM-R-shaped Unigram (Metaspace) and BERT's WordPiece, each long context cut into several windows. Every
// feature's ids, token types, padding, start/end labels and context offsets must be equal.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/fs.h"
#include "data/feature_cache.h"
#include "tasks/question_answering/qa_feature_cache.h"
#include "tasks/question_answering/qa_features.h"
#include "tasks/question_answering/qa_tokenizer.h"
#include "tasks/question_answering/squad.h"
#include "text/hf_tokenizer.h"

namespace {

using nlohmann::json;
namespace stdfs = std::filesystem;

const std::string kDir =
    std::string(CORETRAIN_SOURCE_DIR) + "/tests/tasks/question_answering/data/qa_features";
const std::string kTokDir = std::string(CORETRAIN_SOURCE_DIR) + "/tests/text/data/tokenizers";

json variant_json(const std::string& name) {
  const json v = json::parse(ct::fs::read_file(kDir + "/variants.json")).at(name);
  json j = json::parse(ct::fs::read_file(kTokDir + "/" + v.at("base").get<std::string>()));
  for (const auto& [k, val] : v.at("set").items()) j[k] = val;
  return j;
}

// Byte offset of code point `c` in `s`.
int32_t byte_of(const std::string& s, int64_t c) {
  int64_t n = 0;
  for (size_t b = 0; b < s.size(); ++b) {
    if ((static_cast<unsigned char>(s[b]) & 0xC0) == 0x80) continue;
    if (n == c) return static_cast<int32_t>(b);
    ++n;
  }
  return static_cast<int32_t>(s.size());
}

void expect_golden(const ct::tasks::FeatureSet& fs, const std::vector<ct::tasks::Example>& examples,
                   const json& g, const std::string& name, int32_t pad, bool types_fed) {
  const auto& gf = g.at("features");
  ASSERT_EQ(fs.size(), static_cast<int64_t>(gf.size())) << name;
  std::vector<int64_t> all(static_cast<size_t>(fs.size()));
  for (int64_t i = 0; i < fs.size(); ++i) all[static_cast<size_t>(i)] = i;
  const ct::tasks::Batch b = fs.collate(all);
  const int64_t T = b.seq_len;
  ASSERT_EQ(T, g.at("max_seq_length").get<int64_t>());
  for (int64_t i = 0; i < fs.size(); ++i) {
    const json& f = gf[static_cast<size_t>(i)];
    const auto& ex = examples[static_cast<size_t>(fs[i].example_index)];
    SCOPED_TRACE(name + " feature " + std::to_string(i) + " of " + ex.id);
    EXPECT_EQ(ex.id, f.at("example_id").get<std::string>());
    const auto ids = f.at("input_ids").get<std::vector<int32_t>>();
    EXPECT_EQ(fs.input_ids(i), ids);
    const auto types = f.at("token_type_ids").get<std::vector<int32_t>>();
    const int64_t n = static_cast<int64_t>(ids.size());
    EXPECT_EQ(T - n, f.at("padding").get<int64_t>());
    for (int64_t k = 0; k < T; ++k) {
      const size_t at = static_cast<size_t>(i * T + k);
      EXPECT_EQ(b.input_ids[at], k < n ? ids[static_cast<size_t>(k)] : pad);
      EXPECT_EQ(b.attention_mask[at], k < n ? 1 : 0);
      // Types only where the model gets them (RoBERTa's and XLM-R's tokenizers give it none; HF's
      // TemplateProcessing gives overflow windows type 1 where the template says 0, which nothing reads).
      if (k < n && types_fed) {
        EXPECT_EQ(b.token_type_ids[at], types[static_cast<size_t>(k)]) << "token " << k;
      }
    }
    EXPECT_EQ(fs[i].start_position, f.at("start_positions").get<int32_t>());
    EXPECT_EQ(fs[i].end_position, f.at("end_positions").get<int32_t>());
    // The same row unpadded (--pad_to_max_length False packs rows end to end).
    const std::vector<int64_t> one = {i};
    const ct::tasks::Batch p = fs.collate_packed(one);
    EXPECT_EQ(p.input_ids, ids);
    if (types_fed) {
      EXPECT_EQ(p.token_type_ids, types);
    }
    const json& offs = f.at("offset_mapping");
    for (int64_t k = 0; k < n; ++k) {
      const json& o = offs[static_cast<size_t>(k)];
      const auto span = fs.offset(i, k);
      ASSERT_EQ(span.has_value(), !o.is_null()) << "token " << k;
      if (!span) continue;
      EXPECT_EQ(span->begin, byte_of(ex.context, o[0].get<int64_t>())) << "token " << k;
      EXPECT_EQ(span->end, byte_of(ex.context, o[1].get<int64_t>())) << "token " << k;
    }
  }
}

struct Golden {
  json g;
  std::vector<ct::tasks::Example> examples;
  ct::tasks::FeatureOptions options;
};

Golden golden(const std::string& name) {
  Golden r;
  r.g = json::parse(ct::fs::read_file(kDir + "/golden_" + name + ".json"));
  r.examples = ct::tasks::read_squad(kDir + "/examples.json", nullptr, /*answers_optional=*/true);
  r.options.max_seq_length = r.g.at("max_seq_length").get<int64_t>();
  r.options.doc_stride = r.g.at("doc_stride").get<int64_t>();
  r.options.pad_to_max_length = true;
  return r;
}

class QaFeaturesGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(QaFeaturesGolden, EqualsRunQaWithHfTokenizer) {
  const std::string name = GetParam();
  const json v = json::parse(ct::fs::read_file(kDir + "/variants.json")).at(name);
  const auto tok = ct::text::HfTokenizer::from_json(variant_json(name), name);
  Golden gd = golden(name);
  const int32_t pad = tok.token_to_id(v.at("pad").get<std::string>());
  const bool types = v.at("token_type_ids").get<bool>();
  const auto fs = ct::tasks::FeatureSet::build(gd.examples, tok, gd.options, pad, types);
  expect_golden(fs, gd.examples, gd.g, name, pad, types);
}

INSTANTIATE_TEST_SUITE_P(Variants, QaFeaturesGolden, ::testing::Values("roberta", "xlmr", "bert"));

// A model folder through QaTokenizer: RoBERTa's model type gives the model no token_type_ids (HF's are 0
// anyway), BERT's folder takes the WordPiece fast path and gives the same features as the tokenizer.json
// engine.
TEST(QaTokenizer, FoldersGiveTheGoldenFeatures) {
  const std::string root =
      (stdfs::temp_directory_path() / ("ct_qa_tok_" + std::to_string(::getpid()))).string();
  for (const std::string name : {"roberta", "xlmr", "bert"}) {
    const std::string dir = root + "/" + name;
    stdfs::create_directories(dir);
    ct::fs::write_file_atomic(dir + "/tokenizer.json", variant_json(name).dump());
    const std::string model_type = name == "xlmr" ? "xlm-roberta" : name;
    const auto qt = ct::tasks::QaTokenizer::from_dir(dir, model_type);
    EXPECT_STREQ(qt.kind(), name == "bert" ? "wordpiece" : "tokenizer.json");
    Golden gd = golden(name);
    const json v = json::parse(ct::fs::read_file(kDir + "/variants.json")).at(name);
    const int32_t pad = ct::text::HfTokenizer::from_json(variant_json(name), name)
                            .token_to_id(v.at("pad").get<std::string>());
    expect_golden(qt.build_features(gd.examples, gd.options), gd.examples, gd.g, name, pad,
                  v.at("token_type_ids").get<bool>());
    qt.save(dir + "/saved");
    EXPECT_TRUE(stdfs::exists(dir + "/saved/tokenizer.json"));
    EXPECT_EQ(ct::tasks::QaTokenizer::from_dir(dir + "/saved", model_type).fingerprint(), qt.fingerprint());
  }
  EXPECT_NE(ct::tasks::QaTokenizer::from_dir(root + "/roberta", "roberta").fingerprint(),
            ct::tasks::QaTokenizer::from_dir(root + "/bert", "bert").fingerprint());
  stdfs::remove_all(root);
}

// The cache file keeps the special-token layout: a RoBERTa feature set reads back equal.
TEST(QaTokenizer, FeatureCacheRoundTripsTheLayout) {
  const auto tok = ct::text::HfTokenizer::from_json(variant_json("roberta"), "roberta");
  Golden gd = golden("roberta");
  const auto fs = ct::tasks::FeatureSet::build(gd.examples, tok, gd.options, tok.token_to_id("<pad>"), false);
  const std::string path =
      (stdfs::temp_directory_path() / ("ct_qa_cache_" + std::to_string(::getpid()) + ".bin")).string();
  ct::tasks::save_feature_set(path, fs);
  const auto back = ct::tasks::load_feature_set(path);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->layout(), fs.layout());
  EXPECT_EQ(ct::tasks::feature_set_hash(*back), ct::tasks::feature_set_hash(fs));
  EXPECT_EQ(fs.layout().middle.size(), 2u);
  stdfs::remove(path);
}

}  // namespace

// HfTokenizer::from_dir on folders without tokenizer.json, converted as transformers converts them, checked
// against what HF gives for the equivalent tokenizer.json (the pipeline goldens), and save() round trips.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/fs.h"
#include "text/hf_tokenizer.h"
#include "text/precompiled.h"

namespace ct::text {
namespace {

using nlohmann::json;
namespace stdfs = std::filesystem;

const std::string kData = CORETRAIN_TEST_DATA;

json load(const std::string& path) {
  return json::parse(fs::read_file(path));
}

std::string fresh_dir(const std::string& name) {
  const std::string d = testing::TempDir() + "hf_tokenizer_files_" + name;
  stdfs::remove_all(d);
  stdfs::create_directories(d);
  return d;
}

// ids, tokens and char offsets of every golden single of `golden` (a pipeline_golden file).
void expect_matches_golden(const HfTokenizer& tok, const std::string& golden) {
  const auto strings = load(kData + "/pipeline_golden/strings.json").get<std::vector<std::string>>();
  const json g = load(kData + "/pipeline_golden/" + golden + ".json");
  int bad = 0, n = 0;
  for (const auto& s : g["singles"]) {
    const Encoding e = tok.encode(strings[s[0].get<size_t>()], true, OffsetUnit::kChar);
    json offs = json::array();
    for (auto [b, en] : e.offsets) offs.push_back({b, en});
    const bool same = json(e.ids) == s[1]["ids"] && json(e.tokens) == s[1]["tokens"] &&
                      offs == s[1]["offsets"] && json(e.type_ids) == s[1]["type_ids"];
    if (!same && ++bad <= 3) ADD_FAILURE() << golden << " #" << s[0] << " ids " << json(e.ids).dump();
    ++n;
  }
  EXPECT_EQ(bad, 0) << golden << ": " << bad << " of " << n << " differ";
}

// Two pipelines agree on every field of every golden string, single and paired.
void expect_same(const HfTokenizer& a, const HfTokenizer& b, const std::string& what) {
  const auto strings = load(kData + "/pipeline_golden/strings.json").get<std::vector<std::string>>();
  int bad = 0;
  auto field_eq = [](const Encoding& x, const Encoding& y) {
    return x.ids == y.ids && x.tokens == y.tokens && x.offsets == y.offsets && x.type_ids == y.type_ids &&
           x.word_ids == y.word_ids && x.special_tokens_mask == y.special_tokens_mask &&
           x.sequence_ids() == y.sequence_ids();
  };
  for (size_t i = 0; i < strings.size(); ++i) {
    const bool same = field_eq(a.encode(strings[i]), b.encode(strings[i])) &&
                      field_eq(a.encode_pair(strings[i], strings[(i * 7) % strings.size()]),
                               b.encode_pair(strings[i], strings[(i * 7) % strings.size()]));
    if (!same && ++bad <= 3) ADD_FAILURE() << what << ": string #" << i << " " << json(strings[i]).dump();
  }
  EXPECT_EQ(bad, 0) << what;
}

void write_vocab_merges(const json& tj, const std::string& dir) {
  fs::write_file_atomic(dir + "/vocab.json", tj["model"]["vocab"].dump());
  std::string merges = "#version: 0.2\n";
  for (const auto& m : tj["model"]["merges"]) merges += m.get<std::string>() + "\n";
  fs::write_file_atomic(dir + "/merges.txt", merges);
}

TEST(HfTokenizerFiles, Gpt2FromVocabAndMerges) {
  const std::string dir = fresh_dir("gpt2");
  write_vocab_merges(load(kData + "/tokenizers/gpt2.json"), dir);
  fs::write_file_atomic(dir + "/tokenizer_config.json", R"({"tokenizer_class": "GPT2Tokenizer"})");
  expect_matches_golden(HfTokenizer::from_dir(dir), "gpt2");
}

TEST(HfTokenizerFiles, RobertaFromVocabAndMerges) {
  const std::string dir = fresh_dir("roberta");
  write_vocab_merges(load(kData + "/tokenizers/gpt2.json"), dir);
  fs::write_file_atomic(dir + "/tokenizer_config.json", R"({"tokenizer_class": "RobertaTokenizer",
      "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "cls_token": "<|endoftext|>",
      "sep_token": "<|endoftext|>", "unk_token": "<|endoftext|>", "pad_token": "<|endoftext|>",
      "mask_token": "<mask>"})");
  expect_matches_golden(HfTokenizer::from_dir(dir), "roberta");
}

// A SentencePiece ModelProto, written by hand.
struct Proto {
  std::string out;
  void varint(uint64_t v) {
    do {
      out.push_back(static_cast<char>((v & 0x7F) | (v > 0x7F ? 0x80 : 0)));
      v >>= 7;
    } while (v);
  }
  void key(int field, int wire) { varint(static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire)); }
  void bytes(int field, const std::string& s) {
    key(field, 2);
    varint(s.size());
    out += s;
  }
};

std::string xlmr_spm_model() {
  const json tj = load(kData + "/tokenizers/unigram_nmt.json");
  const json& vocab = tj["model"]["vocab"];
  Proto model;
  auto piece = [&](const std::string& p, float score, int type) {
    Proto m;
    m.bytes(1, p);
    m.key(2, 5);
    uint32_t u;
    std::memcpy(&u, &score, 4);
    for (int k = 0; k < 4; ++k) m.out.push_back(static_cast<char>((u >> (8 * k)) & 0xFF));
    m.key(3, 0);
    m.varint(static_cast<uint64_t>(type));
    model.bytes(1, m.out);
  };
  // XLM-R's SentencePiece ids: <unk> <s> </s> first; the converter puts fairseq's four specials in their
  // place.
  piece("<unk>", 0, 2);
  piece("<s>", 0, 3);
  piece("</s>", 0, 3);
  for (size_t i = 4; i + 1 < vocab.size(); ++i) piece(vocab[i][0], vocab[i][1].get<float>(), 1);
  Proto trainer;
  trainer.key(3, 0);
  trainer.varint(1);
  trainer.key(40, 0);
  trainer.varint(0);
  model.bytes(2, trainer.out);
  Proto norm;
  norm.bytes(1, "nmt_nfkc");
  norm.bytes(2, base64_decode(tj["normalizer"]["normalizers"][0]["precompiled_charsmap"].get<std::string>(),
                              "test"));
  model.bytes(3, norm.out);
  return model.out;
}

TEST(HfTokenizerFiles, XlmRobertaFromSentencePieceModelAndSaveRoundTrip) {
  const std::string dir = fresh_dir("xlmr");
  fs::write_file_atomic(dir + "/sentencepiece.bpe.model", xlmr_spm_model());
  fs::write_file_atomic(dir + "/tokenizer_config.json", R"({"tokenizer_class": "XLMRobertaTokenizer"})");
  const HfTokenizer tok = HfTokenizer::from_dir(dir);
  // The .model holds float32 scores, the fixture (checked against HF by the goldens) their double roundings,
  // which break ties differently on long runs of one letter; with the fixture's scores made float32 both
  // agree exactly.
  json fixture = load(kData + "/tokenizers/unigram_nmt.json");
  for (auto& v : fixture["model"]["vocab"]) v[1] = static_cast<double>(v[1].get<float>());
  expect_same(tok, HfTokenizer::from_json(fixture, "fixture"), "XLM-R from spm");
  const std::string saved = fresh_dir("xlmr_saved");
  tok.save(saved);
  expect_same(tok, HfTokenizer::from_file(saved + "/tokenizer.json"), "saved tokenizer.json");
  expect_same(tok, HfTokenizer::from_dir(saved), "saved folder");
}

// DeBERTa-v3's Hub repo ships only spm.model: DebertaV2Converter's pipeline (Strip, Precompiled, " {2,}" -> "
// ", Metaspace, [CLS] A [SEP] B [SEP] with B's type 1).
TEST(HfTokenizerFiles, DebertaV2FromSentencePieceModel) {
  Proto model;
  auto piece = [&](const std::string& p, float score, int type) {
    Proto m;
    m.bytes(1, p);
    m.key(2, 5);
    uint32_t u;
    std::memcpy(&u, &score, 4);
    for (int k = 0; k < 4; ++k) m.out.push_back(static_cast<char>((u >> (8 * k)) & 0xFF));
    m.key(3, 0);
    m.varint(static_cast<uint64_t>(type));
    model.bytes(1, m.out);
  };
  piece("[PAD]", 0, 3);
  piece("[CLS]", 0, 3);
  piece("[SEP]", 0, 3);
  piece("[UNK]", 0, 2);
  piece("\xE2\x96\x81Hello", -1, 1);
  piece("\xE2\x96\x81world", -1, 1);
  piece("\xE2\x96\x81", -2, 1);
  piece("[MASK]", 0, 4);
  Proto trainer;
  trainer.key(3, 0);
  trainer.varint(1);
  trainer.key(40, 0);
  trainer.varint(3);
  model.bytes(2, trainer.out);
  const std::string dir = fresh_dir("deberta");
  fs::write_file_atomic(dir + "/spm.model", model.out);
  fs::write_file_atomic(dir + "/tokenizer_config.json", R"({"tokenizer_class": "DebertaV2Tokenizer"})");
  const HfTokenizer tok = HfTokenizer::from_dir(dir);
  const Encoding e = tok.encode_pair("  Hello   world ", "world");
  EXPECT_EQ(e.ids, (std::vector<int32_t>{1, 4, 5, 2, 5, 2}));
  EXPECT_EQ(e.type_ids, (std::vector<int32_t>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(e.offsets[1], (std::pair<uint32_t, uint32_t>{2, 7}));
  // "x " before the added [MASK] is normalized alone: Strip drops its space.
  EXPECT_EQ(tok.encode("x [MASK]").ids, (std::vector<int32_t>{1, 6, 3, 7, 2}));
}

TEST(HfTokenizerFiles, SaveKeepsTruncationAndPadding) {
  HfTokenizer tok = HfTokenizer::from_file(kData + "/tokenizers/bert.json");
  TruncationParams t;
  t.max_length = 6;
  t.stride = 1;
  tok.set_truncation(t);
  PaddingParams p;
  p.fixed = 6;
  tok.set_padding(p);
  const std::string dir = fresh_dir("bert_saved");
  tok.save(dir);
  const HfTokenizer back = HfTokenizer::from_file(dir + "/tokenizer.json");
  const Encoding a = tok.encode("hello world hello world hello"),
                 b = back.encode("hello world hello world hello");
  EXPECT_EQ(a.ids, b.ids);
  ASSERT_EQ(a.overflowing.size(), b.overflowing.size());
  EXPECT_EQ(b.ids.size(), 6u);
}

// transformers' call padding: tokenizer_config.json's pad_token (and padding_side), else the file's padding
// section, whose pad_id is not used (the id is the token's); an explicit null pad_token means none at all,
// and the training commands' pad_token_id() then falls back to a pad-like token of the vocabulary.
TEST(HfTokenizerFiles, CallPaddingAsTransformersDerivesIt) {
  json tj = load(kData + "/tokenizers/unigram_nmt.json");  // <s> 0, <pad> 1, </s> 2, <unk> 3
  const std::string dir = fresh_dir("call_padding");
  fs::write_file_atomic(dir + "/tokenizer.json", tj.dump());
  EXPECT_FALSE(HfTokenizer::from_dir(dir).call_padding().has_value());
  EXPECT_EQ(HfTokenizer::from_dir(dir).pad_token_id(), 1);  // the vocabulary's <pad>

  fs::write_file_atomic(dir + "/tokenizer_config.json", R"({"pad_token": "</s>", "padding_side": "left"})");
  auto p = HfTokenizer::from_dir(dir).call_padding();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pad_id, 2);
  EXPECT_EQ(p->pad_token, "</s>");
  EXPECT_TRUE(p->left);

  tj["padding"] = {
      {"strategy", "BatchLongest"}, {"direction", "Left"}, {"pad_to_multiple_of", nullptr}, {"pad_id", 0},
      {"pad_type_id", 1},           {"pad_token", "<unk>"}};
  fs::write_file_atomic(dir + "/tokenizer.json", tj.dump());
  stdfs::remove(dir + "/tokenizer_config.json");
  p = HfTokenizer::from_dir(dir).call_padding();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pad_id, 3);
  EXPECT_EQ(p->pad_type_id, 1);
  EXPECT_TRUE(p->left);
  EXPECT_EQ(HfTokenizer::from_dir(dir).pad_token_id(), 3);

  fs::write_file_atomic(dir + "/tokenizer_config.json", R"({"pad_token": {"content": "<pad>"}})");
  p = HfTokenizer::from_dir(dir).call_padding();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pad_id, 1);
  EXPECT_TRUE(p->left);  // the section's side: the config names none

  fs::write_file_atomic(dir + "/tokenizer_config.json", R"({"pad_token": null})");
  EXPECT_FALSE(HfTokenizer::from_dir(dir).call_padding().has_value());

  fs::write_file_atomic(dir + "/tokenizer_config.json", R"({"pad_token": "<nope>"})");
  EXPECT_EQ(HfTokenizer::from_dir(dir).call_padding()->pad_id, -1);
  EXPECT_EQ(HfTokenizer::from_dir(dir).pad_token_id(), 1);
}

TEST(HfTokenizerFiles, BertFromVocabTxtAndLlamaAddEos) {
  json bert = load(kData + "/tokenizers/bert.json");
  std::vector<std::string> vocab(bert["model"]["vocab"].size());
  for (auto it = bert["model"]["vocab"].begin(); it != bert["model"]["vocab"].end(); ++it)
    vocab[it.value().get<size_t>()] = it.key();
  // vocab.txt cannot hold tokens with line breaks or edge whitespace; the fixture has some, renamed on both
  // sides.
  json renamed = json::object();
  std::string txt;
  for (size_t i = 0; i < vocab.size(); ++i) {
    std::string v = vocab[i];
    if (v.find_first_of("\r\n") != std::string::npos || (!v.empty() && (v.back() == ' ' || v.back() == '\t')))
      v = "[unused" + std::to_string(i) + "]";
    renamed[v] = i;
    txt += v + "\n";
  }
  bert["model"]["vocab"] = renamed;
  std::string dir = fresh_dir("bert_txt");
  fs::write_file_atomic(dir + "/vocab.txt", txt);
  expect_same(HfTokenizer::from_dir(dir), HfTokenizer::from_json(bert, "bert"), "BERT from vocab.txt");

  dir = fresh_dir("llama");
  fs::write_file_atomic(dir + "/tokenizer.json", fs::read_file(kData + "/tokenizers/llama2_style.json"));
  fs::write_file_atomic(
      dir + "/tokenizer_config.json",
      R"({"tokenizer_class": "LlamaTokenizer", "add_bos_token": true, "add_eos_token": true})");
  const Encoding e = HfTokenizer::from_dir(dir).encode("hello");
  ASSERT_GE(e.ids.size(), 3u);
  EXPECT_EQ(e.ids.front(), 1);
  EXPECT_EQ(e.ids.back(), 2);
}

TEST(HfTokenizerFiles, BadFoldersAreOneLineErrors) {
  const std::string dir = fresh_dir("empty");
  try {
    HfTokenizer::from_dir(dir);
    FAIL() << "no error";
  } catch (const ct::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no tokenizer files"), std::string::npos) << e.what();
  }
  std::string model = xlmr_spm_model();
  for (size_t cut : {size_t{1}, size_t{7}, model.size() / 2, model.size() - 3}) {
    fs::write_file_atomic(dir + "/spm.model", model.substr(0, cut));
    EXPECT_THROW(HfTokenizer::from_dir(dir), ct::Error) << cut;
  }
}

}  // namespace
}  // namespace ct::text

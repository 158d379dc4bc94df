// Tokenizer folders: vocab.txt, tokenizer.json (WordPiece form), tokenizer_config.json and
// special_tokens_map.json as HF writes them; save/from_dir round trip; one clear error per bad input, naming
// the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "core/fs.h"
#include "text/tokenizer.h"

namespace ct::text {
namespace {

namespace sfs = std::filesystem;
using nlohmann::json;

class TokenizerFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (sfs::temp_directory_path() / ("ct_text_" + std::to_string(::getpid()) + "_" +
                                          ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    sfs::remove_all(dir_);
    sfs::create_directories(dir_);
  }
  void TearDown() override { sfs::remove_all(dir_); }
  void write(const std::string& name, const std::string& content) {
    fs::write_file_atomic(dir_ + "/" + name, content);
  }

  // from_dir must throw a one-line ct::Error containing every fragment.
  void expect_error(const std::vector<std::string>& fragments) {
    try {
      Tokenizer::from_dir(dir_);
      ADD_FAILURE() << "no error for " << dir_;
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      for (const auto& f : fragments)
        EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
    }
  }

  std::string dir_;
};

const char* kVocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n##s\ncafé\ncafe\n";

std::vector<int32_t> ids(const Tokenizer& t, std::string_view text) {
  std::vector<int32_t> out;
  for (const auto& tok : t.encode(text)) out.push_back(tok.id);
  return out;
}

// vocab.txt: id = line index, trailing whitespace (and \r) trimmed like WordPiece::read_file; a final newline
// adds no entry; a repeated token resolves to its last line (HF's dict / HashMap overwrite).
TEST_F(TokenizerFiles, VocabTxtLines) {
  write("vocab.txt", "[PAD]\r\n[UNK]  \n[CLS]\t\n[SEP]\nhello\nworld\nhello\n\nx");
  auto t = Tokenizer::from_dir(dir_);
  EXPECT_EQ(t.vocab_size(), 9);
  EXPECT_EQ(t.pad_id(), 0);
  EXPECT_EQ(t.unk_id(), 1);
  EXPECT_EQ(t.cls_id(), 2);
  EXPECT_EQ(t.sep_id(), 3);
  EXPECT_EQ(t.mask_id(), -1);  // optional
  EXPECT_EQ(t.token_to_id("hello"), 6);
  EXPECT_EQ(t.vocab()[4], "hello");
  EXPECT_EQ(t.token_to_id("x"), 8);
  EXPECT_EQ(ids(t, "Hello world"), (std::vector<int32_t>{6, 5}));
  // No config: HF BertTokenizer defaults.
  EXPECT_TRUE(t.options().do_lower_case);
  EXPECT_EQ(t.options().strip_accents, -1);
}

TEST_F(TokenizerFiles, TokenizerConfigOverrides) {
  write("vocab.txt", kVocab);
  write("tokenizer_config.json",
        R"({"do_lower_case": false, "strip_accents": true, "tokenize_chinese_chars": false,
      "model_max_length": 1000000000000000019884624838656, "tokenizer_class": "BertTokenizer",
      "unk_token": {"content": "[UNK]", "__type": "AddedToken"}, "cls_token": "[CLS]"})");
  auto t = Tokenizer::from_dir(dir_);
  EXPECT_FALSE(t.options().do_lower_case);
  EXPECT_EQ(t.options().strip_accents, 1);
  EXPECT_FALSE(t.options().tokenize_chinese_chars);
  EXPECT_EQ(t.options().model_max_length, std::numeric_limits<int64_t>::max());  // HF's "no limit"
  EXPECT_EQ(ids(t, "Café"), (std::vector<int32_t>{1}));  // stripped, not lowered: "Cafe"
  EXPECT_EQ(ids(t, "café"), (std::vector<int32_t>{9}));
  write("tokenizer_config.json", R"({"model_max_length": 384})");
  EXPECT_EQ(Tokenizer::from_dir(dir_).options().model_max_length, 384);
}

// special_tokens_map.json renames special tokens (and wins over tokenizer_config.json, as in
// from_pretrained).
TEST_F(TokenizerFiles, SpecialTokensMap) {
  write("vocab.txt", "<pad>\n<unk>\n<s>\n</s>\n[CLS]\nhi\n");
  write("tokenizer_config.json", R"({"cls_token": "[CLS]"})");
  write(
      "special_tokens_map.json",
      R"({"pad_token": "<pad>", "unk_token": "<unk>", "cls_token": "<s>", "sep_token": {"content": "</s>"}})");
  auto t = Tokenizer::from_dir(dir_);
  EXPECT_EQ(t.pad_id(), 0);
  EXPECT_EQ(t.unk_id(), 1);
  EXPECT_EQ(t.cls_id(), 2);
  EXPECT_EQ(t.sep_id(), 3);
  EXPECT_EQ(ids(t, "hi </s>"), (std::vector<int32_t>{5, 3}));
}

// A hand-written tokenizer.json in HF's WordPiece form; it wins over vocab.txt when both exist.
TEST_F(TokenizerFiles, TokenizerJsonWordPiece) {
  write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n");
  write("tokenizer.json", R"({
    "version": "1.0", "truncation": null, "padding": null,
    "added_tokens": [
      {"id": 0, "content": "[PAD]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
      {"id": 7, "content": "<extra>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false}],
    "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": false},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": null,
    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "@@", "max_input_chars_per_word": 4,
              "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "Hel": 4, "@@lo": 5}}})");
  auto t = Tokenizer::from_dir(dir_);
  EXPECT_EQ(t.vocab_size(), 8);  // added token 7 past the model vocab; id 6 is a hole
  EXPECT_EQ(t.vocab()[6], "");
  EXPECT_EQ(t.options().continuing_subword_prefix, "@@");
  EXPECT_EQ(t.options().max_input_chars_per_word, 4);
  EXPECT_FALSE(t.options().do_lower_case);
  EXPECT_EQ(ids(t, "Hello"), (std::vector<int32_t>{1}));  // 5 chars > 4
  EXPECT_EQ(ids(t, "Hello<extra>Hel"), (std::vector<int32_t>{1, 7, 4}));
  EXPECT_EQ(ids(t, "Hello"), (std::vector<int32_t>{1}));
  EXPECT_EQ(ids(t, "Hell"), (std::vector<int32_t>{1}));  // "@@l" missing
  write("tokenizer_config.json", R"({"do_lower_case": true})");
  EXPECT_TRUE(Tokenizer::from_dir(dir_).options().do_lower_case);  // config overrides the normalizer
}

TEST_F(TokenizerFiles, SaveWritesHfLayoutAndRoundTrips) {
  TokenizerOptions o;
  o.do_lower_case = false;
  o.strip_accents = 1;
  o.tokenize_chinese_chars = false;
  o.model_max_length = 256;
  auto t = Tokenizer::from_vocab({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "Hello", "World", "##s",
                                  "\"q\"", "中文", "Cafe", "[UNK]"},
                                 o);
  t.save(dir_ + "/out");
  for (const char* f : {"vocab.txt", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.json"}) {
    EXPECT_TRUE(sfs::exists(dir_ + "/out/" + f)) << f;
  }
  int files = 0;
  for (auto& e : sfs::directory_iterator(dir_ + "/out")) files += e.is_regular_file();
  EXPECT_EQ(files, 4);  // no temporaries left

  const json tj = json::parse(fs::read_file(dir_ + "/out/tokenizer.json"));
  EXPECT_EQ(tj["version"], "1.0");
  EXPECT_TRUE(tj["truncation"].is_null());
  EXPECT_EQ(tj["normalizer"]["type"], "BertNormalizer");
  EXPECT_EQ(tj["normalizer"]["lowercase"], false);
  EXPECT_EQ(tj["normalizer"]["strip_accents"], true);
  EXPECT_EQ(tj["normalizer"]["handle_chinese_chars"], false);
  EXPECT_EQ(tj["pre_tokenizer"]["type"], "BertPreTokenizer");
  EXPECT_EQ(tj["post_processor"]["type"], "TemplateProcessing");
  EXPECT_EQ(tj["post_processor"]["pair"].size(), 5u);
  EXPECT_EQ(tj["post_processor"]["pair"][3]["Sequence"]["id"], "B");
  EXPECT_EQ(tj["post_processor"]["pair"][4]["SpecialToken"]["type_id"], 1);
  EXPECT_EQ(tj["post_processor"]["special_tokens"]["[CLS]"]["ids"][0], 2);
  EXPECT_EQ(tj["post_processor"]["special_tokens"]["[SEP]"]["ids"][0], 3);
  EXPECT_EQ(tj["decoder"]["type"], "WordPiece");
  EXPECT_EQ(tj["model"]["type"], "WordPiece");
  EXPECT_EQ(tj["model"]["vocab"]["Hello"], 5);
  EXPECT_EQ(tj["model"]["vocab"]["\"q\""], 8);
  EXPECT_EQ(tj["model"]["vocab"]["[UNK]"], 11);  // the later duplicate line wins
  ASSERT_EQ(tj["added_tokens"].size(), 5u);
  EXPECT_EQ(tj["added_tokens"][0]["content"], "[PAD]");
  EXPECT_EQ(tj["added_tokens"][0]["normalized"], false);
  EXPECT_EQ(tj["added_tokens"][0]["special"], true);
  const json cfg = json::parse(fs::read_file(dir_ + "/out/tokenizer_config.json"));
  EXPECT_EQ(cfg["tokenizer_class"], "BertTokenizer");
  EXPECT_EQ(cfg["do_lower_case"], false);
  EXPECT_EQ(cfg["model_max_length"], 256);
  EXPECT_EQ(cfg["strip_accents"], true);
  EXPECT_EQ(cfg["cls_token"], "[CLS]");
  const json map = json::parse(fs::read_file(dir_ + "/out/special_tokens_map.json"));
  EXPECT_EQ(map["mask_token"], "[MASK]");

  const std::string text = "Hello Worlds, \"q\" 中文 Café [SEP] x";
  for (bool drop_json : {false, true}) {
    if (drop_json) sfs::remove(dir_ + "/out/tokenizer.json");  // vocab.txt + tokenizer_config.json path
    auto r = Tokenizer::from_dir(dir_ + "/out");
    EXPECT_EQ(r.vocab().size(), t.vocab().size());
    if (!drop_json) {
      EXPECT_EQ(r.vocab()[1], "");  // the shadowed duplicate id is not in the model vocab
    } else {
      EXPECT_EQ(r.vocab(), t.vocab());
    }
    EXPECT_EQ(r.options().do_lower_case, o.do_lower_case);
    EXPECT_EQ(r.options().strip_accents, o.strip_accents);
    EXPECT_EQ(r.options().tokenize_chinese_chars, o.tokenize_chinese_chars);
    EXPECT_EQ(r.options().model_max_length, o.model_max_length);
    EXPECT_EQ(r.unk_id(), t.unk_id());
    EXPECT_EQ(r.cls_id(), t.cls_id());
    const auto a = t.encode(text), b = r.encode(text);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].id, b[i].id);
      EXPECT_EQ(a[i].begin, b[i].begin);
      EXPECT_EQ(a[i].end, b[i].end);
    }
  }
  // Saving a loaded tokenizer.json again gives the same file.
  t.save(dir_ + "/a");
  Tokenizer::from_dir(dir_ + "/a").save(dir_ + "/b");
  EXPECT_EQ(fs::read_file(dir_ + "/a/tokenizer.json"), fs::read_file(dir_ + "/b/tokenizer.json"));
  EXPECT_EQ(fs::read_file(dir_ + "/a/tokenizer_config.json"),
            fs::read_file(dir_ + "/b/tokenizer_config.json"));
}

TEST_F(TokenizerFiles, MissingFolderOrFiles) {
  try {
    Tokenizer::from_dir(dir_ + "/nope");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir_ + "/nope"), std::string::npos);
  }
  expect_error({dir_, "neither tokenizer.json nor vocab.txt"});
  write("file", "x");
  try {
    Tokenizer::from_dir(dir_ + "/file");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a directory"), std::string::npos);
  }
}

TEST_F(TokenizerFiles, VocabLackingSpecials) {
  write("vocab.txt", "[PAD]\n[UNK]\nhello\n");
  expect_error({"vocab.txt", "sep_token '[SEP]'", "cls_token '[CLS]'"});
  write("vocab.txt", "");
  expect_error({"vocab.txt", "unk_token '[UNK]'", "pad_token '[PAD]'"});
  write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nbad\xFF\n");
  expect_error({"vocab.txt", "entry 4", "UTF-8"});
}

TEST_F(TokenizerFiles, MalformedJson) {
  write("vocab.txt", kVocab);
  write("tokenizer_config.json", "{\"do_lower_case\": tru");
  expect_error({"tokenizer_config.json", "malformed JSON"});
  write("tokenizer_config.json", "[1, 2]");
  expect_error({"tokenizer_config.json", "JSON object"});
  write("tokenizer_config.json", R"({"do_lower_case": "yes"})");
  expect_error({"tokenizer_config.json", "do_lower_case", "true or false"});
  write("tokenizer_config.json", R"({"model_max_length": -5})");
  expect_error({"tokenizer_config.json", "model_max_length"});
  write("tokenizer_config.json", "{}");
  write("special_tokens_map.json", "{");
  expect_error({"special_tokens_map.json", "malformed JSON"});
  sfs::remove(dir_ + "/special_tokens_map.json");
  write("tokenizer.json", "{\"model\": ");
  expect_error({"tokenizer.json", "malformed JSON"});
}

TEST_F(TokenizerFiles, TokenizerJsonNotWordPiece) {
  const std::string rest =
      R"("normalizer": {"type": "BertNormalizer"}, "pre_tokenizer": {"type": "BertPreTokenizer"})";
  write("tokenizer.json", R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, )" + rest + "}");
  expect_error({"tokenizer.json", "model.type is 'BPE'", "WordPiece"});
  write("tokenizer.json", R"({"normalizer": null})");
  expect_error({"tokenizer.json", "\"model\""});
  const std::string model =
      R"("model": {"type": "WordPiece", "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}})";
  write("tokenizer.json",
        "{" + model + R"(, "normalizer": {"type": "NFKC"}, "pre_tokenizer": {"type": "BertPreTokenizer"}})");
  expect_error({"tokenizer.json", "normalizer.type is 'NFKC'"});
  write("tokenizer.json",
        "{" + model +
            R"(, "normalizer": {"type": "BertNormalizer"}, "pre_tokenizer": {"type": "Whitespace"}})");
  expect_error({"tokenizer.json", "pre_tokenizer.type is 'Whitespace'"});
  write("tokenizer.json", "{" + model + ", " + rest + "}");
  EXPECT_EQ(Tokenizer::from_dir(dir_).vocab_size(), 4);
  write("tokenizer.json", R"({"model": {"type": "WordPiece", "vocab": {"[PAD]": -1}}, )" + rest + "}");
  expect_error({"tokenizer.json", "model.vocab[\"[PAD]\"]"});
  write("tokenizer.json",
        R"({"model": {"type": "WordPiece", "vocab": {"[PAD]": 0, "[UNK]": 0}}, )" + rest + "}");
  expect_error({"tokenizer.json", "id 0"});
  write("tokenizer.json", R"({"model": {"type": "WordPiece", "vocab": {"[PAD]": 0}}, )" + rest + "}");
  expect_error({"tokenizer.json", "lacks", "[CLS]"});
  write("tokenizer.json",
        R"({"model": {"type": "WordPiece", "max_input_chars_per_word": 0, "vocab": {}}, )" + rest + "}");
  expect_error({"tokenizer.json", "max_input_chars_per_word"});
  write("tokenizer.json", "{" + model + ", " + rest +
                              R"(, "added_tokens": [{"id": 2, "content": "[MASK]", "special": true}]})");
  expect_error({"tokenizer.json", "added_tokens[0]", "[MASK]"});
}

TEST_F(TokenizerFiles, SaveIntoAFileFails) {
  write("file", "x");
  auto t = Tokenizer::from_vocab({"[PAD]", "[UNK]", "[CLS]", "[SEP]"});
  EXPECT_THROW(t.save(dir_ + "/file"), Error);
  EXPECT_EQ(fs::read_file(dir_ + "/file"), "x");
}

}  // namespace
}  // namespace ct::text

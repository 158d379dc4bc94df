// Bad tokenizer.json files and bad text: one-line ct::Errors, never a crash (run under ASan/UBSan in the
// debug preset). Invalid UTF-8 text is rejected with an error: HF takes Rust &str, which cannot hold it.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "core/error.h"
#include "core/fs.h"
#include "text/hf_tokenizer.h"
#include "text/precompiled.h"
#include "text/sentencepiece_model.h"

namespace ct::text {
namespace {

using nlohmann::json;

const std::string kData = CORETRAIN_TEST_DATA;

std::string error_of(const json& j) {
  try {
    HfTokenizer::from_json(j, "tokenizer.json");
  } catch (const ct::Error& e) {
    return e.what();
  }
  return "";
}

json small_bpe() {
  return json::parse(R"({
    "version": "1.0", "added_tokens": [{"id": 5, "content": "<s>", "single_word": false, "lstrip": false,
      "rstrip": false, "normalized": false, "special": true}],
    "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]},
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
    "post_processor": {"type": "RobertaProcessing", "sep": ["<s>", 5], "cls": ["<s>", 5]},
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "\u0120": 3, "\u0120ab": 4, "<s>": 5},
              "merges": ["a b", ["\u0120", "ab"]]}
  })");
}

TEST(HfTokenizerErrors, UnknownComponentsNameTheTypeAndPath) {
  json j = small_bpe();
  j["normalizer"]["normalizers"][1] = {{"type", "Foo"}};
  EXPECT_EQ(
      error_of(j),
      "tokenizer.json: normalizer.normalizers[1]: normalizer type 'Foo' is not supported (expected one of "
      "BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Replace, Prepend, Precompiled, "
      "Nmt, ByteLevel, Sequence)");
  j = small_bpe();
  j["pre_tokenizer"] = {{"type", "UnicodeScripts"}};
  EXPECT_NE(error_of(j).find("pre_tokenizer type 'UnicodeScripts' is not supported"), std::string::npos);
  j = small_bpe();
  j["model"]["type"] = "Fancy";
  EXPECT_NE(error_of(j).find("model type 'Fancy' is not supported"), std::string::npos);
  j = small_bpe();
  j["post_processor"] = {{"type", "Nope"}};
  EXPECT_NE(error_of(j).find("post_processor type 'Nope' is not supported"), std::string::npos);
  j = small_bpe();
  j["model"]["merges"][0] = "a c";
  EXPECT_EQ(error_of(j), "tokenizer.json: model.merges[0]: token 'c' is not in the vocab");
  j = small_bpe();
  j["model"]["unk_token"] = "<unk>";
  EXPECT_EQ(error_of(j), "tokenizer.json: model.unk_token: '<unk>' is not in the vocab");
  j = small_bpe();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  EXPECT_NE(error_of(j).find("regex '(unclosed' is not valid"), std::string::npos);
}

TEST(HfTokenizerErrors, SmallBpeWorks) {
  const HfTokenizer t = HfTokenizer::from_json(small_bpe(), "small");
  const Encoding e = t.encode("AB");
  EXPECT_EQ(e.ids, (std::vector<int32_t>{5, 4, 5}));
  EXPECT_EQ(t.decode({5, 4, 5}, true), " ab");
}

// Every prefix of a real file and thousands of byte mutations of it: an error or a tokenizer, nothing else.
TEST(HfTokenizerErrors, TruncatedAndMutatedFilesNeverCrash) {
  const std::string text = small_bpe().dump();
  std::mt19937 rng(7);
  int errors = 0, loaded = 0;
  auto attempt = [&](const std::string& s) {
    json j;
    try {
      j = json::parse(s);
    } catch (const json::exception&) {
      ++errors;
      return;
    }
    try {
      const HfTokenizer t = HfTokenizer::from_json(j, "mutant");
      t.encode("ab ab <s> ba");
      ++loaded;
    } catch (const ct::Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      ++errors;
    }
  };
  for (size_t n = 0; n < text.size(); n += 3) attempt(text.substr(0, n));
  const std::string alphabet = "{}[]\":,0123456789-.abtrufnlsAB \\";
  for (int k = 0; k < 3000; ++k) {
    std::string s = text;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) s[rng() % s.size()] = alphabet[rng() % alphabet.size()];
    attempt(s);
  }
  EXPECT_GT(errors, 100);
  EXPECT_GT(loaded, 10);
}

// Structural mutations: every field replaced by values of the wrong type.
TEST(HfTokenizerErrors, WrongFieldTypesAreErrors) {
  const json base = small_bpe();
  const json values[] = {nullptr, 1, -1, "x", json::array(), json::object(), true, 1e300};
  int n = 0;
  std::function<void(const json::json_pointer&, const json&)> walk = [&](const json::json_pointer& p,
                                                                         const json& node) {
    for (const json& v : values) {
      json j = base;
      j[p] = v;
      try {
        HfTokenizer::from_json(j, "typed").encode("ab a b");
      } catch (const ct::Error&) {
      }
      ++n;
    }
    if (node.is_object()) {
      for (auto it = node.begin(); it != node.end(); ++it) walk(p / it.key(), it.value());
    } else if (node.is_array()) {
      for (size_t i = 0; i < node.size(); ++i) walk(p / i, node[i]);
    }
  };
  for (auto it = base.begin(); it != base.end(); ++it) walk(json::json_pointer("/" + it.key()), it.value());
  EXPECT_GT(n, 200);
}

TEST(HfTokenizerErrors, CorruptCharsmapNeverCrashes) {
  std::mt19937 rng(11);
  for (int k = 0; k < 2000; ++k) {
    std::string blob(4 + rng() % 64, '\0');
    for (auto& c : blob) c = static_cast<char>(rng());
    if (k % 2) {
      const uint32_t size = static_cast<uint32_t>((rng() % 16) * 4);
      for (int b = 0; b < 4; ++b) blob[b] = static_cast<char>((size >> (8 * b)) & 0xFF);
    }
    try {
      const Precompiled p(blob, "charsmap");
      NormalizedString s("a\xC3\xA9 \xEF\xBD\xB6\xEF\xBE\x9E x");
      p.normalize(s);
    } catch (const ct::Error&) {
    }
  }
}

// The SentencePiece .model reader on random and mutated protobuf bytes: an error or a model, nothing else.
TEST(HfTokenizerErrors, MutatedSentencePieceModelsNeverCrash) {
  // A small valid ModelProto: pieces <unk> (UNKNOWN), a, b; Unigram; unk_id 0; an empty charsmap.
  const std::string valid = std::string("\x0a\x0e\x0a\x05<unk>\x15\x00\x00\x00\x00\x18\x02", 16) +
                            std::string("\x0a\x08\x0a\x01\x61\x15\x00\x00\x80\xbf", 10) +
                            std::string("\x0a\x08\x0a\x01\x62\x15\x00\x00\x00\xc0", 10) +
                            std::string("\x12\x05\x18\x01\xc0\x02\x00", 7);
  const SentencePieceModel m = read_sentencepiece_model(valid, "valid");
  ASSERT_EQ(m.pieces.size(), 3u);
  EXPECT_EQ(m.pieces[1].piece, "a");
  EXPECT_EQ(m.pieces[2].score, -2.0f);
  std::mt19937 rng(5);
  int errors = 0;
  for (int k = 0; k < 5000; ++k) {
    std::string s = valid;
    if (k % 3 == 0) s = s.substr(0, rng() % s.size());
    for (int e = 0, n = 1 + static_cast<int>(rng() % 4); e < n && !s.empty(); ++e)
      s[rng() % s.size()] = static_cast<char>(rng());
    try {
      read_sentencepiece_model(s, "mutant.model");
    } catch (const ct::Error& err) {
      EXPECT_EQ(std::string(err.what()).find('\n'), std::string::npos);
      ++errors;
    }
  }
  EXPECT_GT(errors, 100);
}

TEST(HfTokenizerText, RandomBytesAreRejectedOrTokenized) {
  const HfTokenizer gpt2 = HfTokenizer::from_file(kData + "/tokenizers/gpt2.json");
  const HfTokenizer xlmr = HfTokenizer::from_file(kData + "/tokenizers/unigram_nmt.json");
  std::mt19937 rng(3);
  int rejected = 0;
  for (int k = 0; k < 400; ++k) {
    std::string s(rng() % 40, '\0');
    for (auto& c : s) c = static_cast<char>(rng() % 4 == 0 ? 0x80 + rng() % 0x80 : rng() % 0x80);
    for (const HfTokenizer* t : {&gpt2, &xlmr}) {
      try {
        const Encoding e = t->encode(s);
        for (auto [b, en] : e.offsets) {
          EXPECT_LE(b, en);
          EXPECT_LE(en, s.size());
        }
      } catch (const ct::Error& e) {
        EXPECT_NE(std::string(e.what()).find("not valid UTF-8"), std::string::npos) << e.what();
        ++rejected;
      }
    }
  }
  EXPECT_GT(rejected, 0);
  // Random valid code points (all planes, controls, unassigned) always tokenize.
  for (int k = 0; k < 300; ++k) {
    std::string s;
    for (int i = 0, n = static_cast<int>(rng() % 20); i < n; ++i) {
      char32_t c = static_cast<char32_t>(rng() % 0x110000);
      if (c >= 0xD800 && c <= 0xDFFF) c = 'x';
      NormalizedString tmp("");
      std::string one;
      if (c < 0x80) {
        one.push_back(static_cast<char>(c));
      } else if (c < 0x800) {
        one = {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
      } else if (c < 0x10000) {
        one = {static_cast<char>(0xE0 | (c >> 12)), static_cast<char>(0x80 | ((c >> 6) & 0x3F)),
               static_cast<char>(0x80 | (c & 0x3F))};
      } else {
        one = {static_cast<char>(0xF0 | (c >> 18)), static_cast<char>(0x80 | ((c >> 12) & 0x3F)),
               static_cast<char>(0x80 | ((c >> 6) & 0x3F)), static_cast<char>(0x80 | (c & 0x3F))};
      }
      s += one;
    }
    EXPECT_NO_THROW(gpt2.encode(s));
    EXPECT_NO_THROW(xlmr.encode_pair(s, s));
  }
}

// One tokenizer shared by threads (per-thread BPE caches, Oniguruma searches on shared regexes) gives what it
// gives alone.
TEST(HfTokenizerText, ThreadsShareOneTokenizer) {
  const auto strings =
      json::parse(fs::read_file(kData + "/pipeline_golden/strings.json")).get<std::vector<std::string>>();
  for (const char* file : {"gpt2.json", "unigram_nmt.json", "llama2_style.json"}) {
    const HfTokenizer tok = HfTokenizer::from_file(kData + "/tokenizers/" + file);
    std::vector<std::vector<int32_t>> alone;
    for (const auto& s : strings) alone.push_back(tok.encode(s).ids);
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int rep = 0; rep < 2; ++rep) {
          for (size_t i = static_cast<size_t>(t); i < strings.size(); i += 2) {
            if (tok.encode(strings[i]).ids != alone[i]) ++mismatches[static_cast<size_t>(t)];
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int m : mismatches) EXPECT_EQ(m, 0) << file;
  }
}

}  // namespace
}  // namespace ct::text

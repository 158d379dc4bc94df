// The README front matter's YAML subset and datasets' data_files rules (globs, configs, default patterns).
#include <gtest/gtest.h>

#include "data/card_features.h"
#include "data/data_files.h"
#include "data/readme_yaml.h"
#include "test_util.h"

namespace ct::data {
namespace {

using json = nlohmann::ordered_json;
using testing::expect_error;

TEST(ReadmeYaml, GlueStyleConfigs) {
  const std::string card = R"(---
annotations_creators:
- other
language:
- en
configs:
- config_name: ax
  data_files:
  - split: test
    path: ax/test-*
- config_name: mrpc   # the paraphrase task
  data_files:
    - split: train
      path: "mrpc/train-*"
    - split: validation
      path: 'mrpc/validation-*'
    - split: test
      path: [mrpc/test-*, "mrpc/extra-*"]
dataset_info:
- config_name: mrpc
  features:
  - name: label
    dtype:
      class_label:
        names:
          '0': not_equivalent
          '1': equivalent
  description: |
    Two lines
    of text: with a colon
  splits: {}
---
# GLUE
text: not yaml
)";
  const json c = card_yaml_section(card, "configs", "README.md");
  ASSERT_TRUE(c.is_array());
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1]["config_name"], "mrpc");
  EXPECT_EQ(c[1]["data_files"][0]["path"], "mrpc/train-*");
  EXPECT_EQ(c[1]["data_files"][1]["path"], "mrpc/validation-*");
  EXPECT_EQ(c[1]["data_files"][2]["path"], json::array({"mrpc/test-*", "mrpc/extra-*"}));
  const json all = parse_yaml(card_front_matter(card), "README.md");
  EXPECT_EQ(all["dataset_info"][0]["features"][0]["dtype"]["class_label"]["names"]["1"], "equivalent");
  EXPECT_EQ(all["dataset_info"][0]["description"], "Two lines\nof text: with a colon");
  EXPECT_EQ(all["dataset_info"][0]["splits"], json::object());
  EXPECT_TRUE(card_yaml_section("# no front matter\n", "configs", "x").is_null());
}

TEST(ReadmeYaml, ScalarsAndErrors) {
  const json j = parse_yaml("a: true\nb: 12\nc: 'it''s'\nd: \"q\\\"x\"\ne: ~\nf: 1.5\n", "t");
  EXPECT_EQ(j["a"], true);
  EXPECT_EQ(j["b"], 12);
  EXPECT_EQ(j["c"], "it's");
  EXPECT_EQ(j["d"], "q\"x");
  EXPECT_TRUE(j["e"].is_null());
  EXPECT_EQ(j["f"], "1.5");
  expect_error([] { parse_yaml("a: b\n  - c\nno colon here\n", "card"); }, {"card: YAML line"});
  expect_error([] { parse_yaml("a: 'open\n", "card"); }, {"card: YAML line 1", "unterminated"});
}

TEST(CardFeatures, DatasetInfoForms) {
  const std::string card = R"(---
dataset_info:
- config_name: mrpc
  features:
  - name: sentence1
    dtype: string
  - name: label
    dtype:
      class_label:
        names:
          '0': not_equivalent
          '1': equivalent
  - name: idx
    dtype: int32
- config_name: squadish
  features:
  - name: answers
    sequence:
    - name: text
      dtype: string
    - name: answer_start
      dtype: int32
  - name: ner_tags
    sequence:
      class_label:
        names:
          '0': O
          '1': B-PER
  - name: tokens
    list: string
  - name: meta
    struct:
    - name: a
      dtype: int64
---
)";
  const auto mrpc = card_features(card, "mrpc", "README.md");
  ASSERT_TRUE(mrpc);
  EXPECT_EQ(mrpc->keys, (std::vector<std::string>{"sentence1", "label", "idx"}));
  EXPECT_EQ(mrpc->field("label")->names, (std::vector<std::string>{"not_equivalent", "equivalent"}));
  EXPECT_EQ(mrpc->field("idx")->dtype, "int32");
  const auto sq = card_features(card, "squadish", "README.md");
  ASSERT_TRUE(sq);
  const parquet::Feature* ans = sq->field("answers");
  ASSERT_EQ(ans->kind, parquet::Feature::Kind::Struct);
  EXPECT_EQ(ans->field("answer_start")->kind, parquet::Feature::Kind::List);
  EXPECT_EQ(ans->field("answer_start")->children[0].dtype, "int32");
  EXPECT_EQ(sq->field("ner_tags")->children[0].names, (std::vector<std::string>{"O", "B-PER"}));
  EXPECT_EQ(sq->field("tokens")->children[0].dtype, "string");
  EXPECT_EQ(sq->field("meta")->field("a")->dtype, "int64");
  EXPECT_FALSE(card_features(card, "other", "README.md"));
  EXPECT_FALSE(card_features("---\nconfigs: []\n---\n", "", "README.md"));
}

TEST(DataFiles, GlobsAsFsspec) {
  EXPECT_TRUE(glob_match("mrpc/train-*", "mrpc/train-00000-of-00001.parquet"));
  EXPECT_FALSE(glob_match("mrpc/*", "mrpc/sub/x.parquet"));
  EXPECT_TRUE(glob_match("**/*.parquet", "a/b/c.parquet"));
  EXPECT_TRUE(glob_match("**/*.parquet", "c.parquet"));
  EXPECT_TRUE(glob_match("data/train-[0-9][0-9]*.csv", "data/train-01.csv"));
  EXPECT_FALSE(glob_match("data/train-[!0-9]*.csv", "data/train-01.csv"));
  EXPECT_TRUE(glob_match("d?ta/*", "data/x"));
}

TEST(DataFiles, ConfigSelectionAndForms) {
  const std::vector<std::string> files = {"README.md", "a/train-0.parquet", "a/train-1.parquet",
                                          "a/test.parquet", "b/all.csv"};
  const json configs = json::parse(R"([
    {"config_name": "a", "data_files": [{"split": "train", "path": "a/train-*"}, {"split": "test", "path": "a/test*"}]},
    {"config_name": "b", "default": true, "data_files": "b/*.csv"},
    {"config_name": "c", "data_files": {"train": ["a/train-1.parquet"], "validation": "a/test.parquet"}},
    {"config_name": "d", "data_dir": "a"}])");
  EXPECT_EQ(select_config(configs, "", "r")["config_name"], "b");
  SplitFiles a = files_of_config(select_config(configs, "a", "r"), files, "r");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].second, (std::vector<std::string>{"a/train-0.parquet", "a/train-1.parquet"}));
  EXPECT_EQ(a[1].first, "test");
  SplitFiles b = files_of_config(select_config(configs, "b", "r"), files, "r");
  EXPECT_EQ(b[0].first, "train");
  EXPECT_EQ(b[0].second, (std::vector<std::string>{"b/all.csv"}));
  SplitFiles c = files_of_config(select_config(configs, "c", "r"), files, "r");
  EXPECT_EQ(c[1].first, "validation");
  SplitFiles d = files_of_config(select_config(configs, "d", "r"), files, "r");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].second, (std::vector<std::string>{"a/train-0.parquet", "a/train-1.parquet"}));
  expect_error([&] { select_config(configs, "zz", "dataset org/x"); },
               {"dataset org/x: no config 'zz'; available configs: a, b, c, d"});
  const json two = json::parse(
      R"([{"config_name": "x", "data_files": "a/*"}, {"config_name": "y", "data_files": "b/*"}])");
  expect_error([&] { select_config(two, "", "dataset org/x"); }, {"config name is missing", "x, y"});
  expect_error([&] { files_of_config(json::parse(R"({"data_files": "nope/*"})"), files, "dataset org/x"); },
               {"dataset org/x config 'default'", "'nope/*' matches no file"});
}

TEST(DataFiles, DefaultPatterns) {
  SplitFiles s = default_split_files({"README.md", "data/train-00000-of-00002.parquet",
                                      "data/train-00001-of-00002.parquet",
                                      "data/validation_matched-00000-of-00001.parquet", ".gitattributes"});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].first, "train");
  EXPECT_EQ(s[0].second.size(), 2u);
  EXPECT_EQ(s[1].first, "validation_matched");
  s = default_split_files({"dev.csv", "train.csv", "my_test_2.csv", "notes.txt.bak", "valid/x.jsonl"});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], (std::pair<std::string, std::vector<std::string>>{"train", {"train.csv"}}));
  EXPECT_EQ(s[1].second, (std::vector<std::string>{"dev.csv", "valid/x.jsonl"}));
  EXPECT_EQ(s[2].second, (std::vector<std::string>{"my_test_2.csv"}));
  s = default_split_files({"corpus.txt", "more/other.txt"});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].first, "train");
  EXPECT_EQ(s[0].second.size(), 2u);
}

}  // namespace
}  // namespace ct::data

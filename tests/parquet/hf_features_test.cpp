// HF features from the footer's "huggingface" key: SQuAD's answers (List form), CoNLL's ClassLabel
// sequences (older Sequence form), and malformed metadata.
#include <gtest/gtest.h>

#include "core/error.h"
#include "parquet/hf_features.h"
#include "parquet/parquet_file.h"
#include "parquet_test_util.h"

namespace ct::parquet {
namespace {

TEST(HfFeatures, SquadAnswersAreAStructOfLists) {
  auto f = ParquetFile::open(test::fixture("squad.parquet"));
  const Feature feats = parse_hf_features(f->key_value("huggingface"), f->name());
  ASSERT_EQ(feats.kind, Feature::Kind::Struct);
  EXPECT_EQ(feats.keys, (std::vector<std::string>{"id", "title", "context", "question", "answers"}));
  EXPECT_EQ(feats.field("context")->dtype, "string");
  const Feature* ans = feats.field("answers");
  ASSERT_EQ(ans->kind, Feature::Kind::Struct);
  ASSERT_EQ(ans->field("text")->kind, Feature::Kind::List);
  EXPECT_EQ(ans->field("text")->children[0].dtype, "string");
  EXPECT_EQ(ans->field("answer_start")->children[0].dtype, "int32");
}

TEST(HfFeatures, ConllClassLabelNames) {
  auto f = ParquetFile::open(test::fixture("conll.parquet"));
  const Feature feats = parse_hf_features(f->key_value("huggingface"), f->name());
  const Feature* ner = feats.field("ner_tags");
  ASSERT_NE(ner, nullptr);
  ASSERT_EQ(ner->kind, Feature::Kind::List);
  EXPECT_EQ(ner->type, "Sequence");
  ASSERT_EQ(ner->children[0].kind, Feature::Kind::ClassLabel);
  EXPECT_EQ(ner->children[0].names, (std::vector<std::string>{"O", "B-PER", "I-PER", "B-ORG", "I-ORG",
                                                              "B-LOC", "I-LOC", "B-MISC", "I-MISC"}));
  EXPECT_EQ(feats.field("pos_tags")->children[0].names.size(), 47u);
  EXPECT_EQ(feats.field("chunk_tags")->children[0].names.size(), 23u);
  EXPECT_EQ(feats.field("tokens")->children[0].dtype, "string");
}

TEST(HfFeatures, SequenceOfDictBecomesStructOfLists) {
  const Feature f = parse_hf_features(
      R"({"info":{"features":{"answers":{"feature":{"text":{"dtype":"string","_type":"Value"},)"
      R"("answer_start":{"dtype":"int32","_type":"Value"}},"length":-1,"_type":"Sequence"},)"
      R"("label":{"num_classes":2,"_type":"ClassLabel"}}}})",
      "x");
  const Feature* a = f.field("answers");
  ASSERT_EQ(a->kind, Feature::Kind::Struct);
  EXPECT_EQ(a->field("text")->kind, Feature::Kind::List);
  EXPECT_EQ(a->field("answer_start")->children[0].dtype, "int32");
  EXPECT_EQ(f.field("label")->names, (std::vector<std::string>{"0", "1"}));
}

TEST(HfFeatures, MalformedMetadataIsOneLine) {
  for (const char* bad :
       {"{", "[]", R"({"info":{}})", R"({"info":{"features":{"a":{"_type":"Value"}}}})",
        R"({"info":{"features":{"a":{"_type":"List"}}}})", R"({"info":{"features":{"a":3}}})"}) {
    try {
      parse_hf_features(bad, "f.parquet");
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("f.parquet", 0), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ct::parquet

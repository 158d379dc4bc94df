// config.json: HF files as published read correctly, defaults, round trip, and one test per rejected input.
#include "model/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "core/fs.h"

namespace ct::model {
namespace {

namespace stdfs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

// bert-base-uncased's config.json as published on the Hub.
const char* kBertBase = R"({
  "architectures": ["BertForMaskedLM"],
  "attention_probs_dropout_prob": 0.1,
  "gradient_checkpointing": false,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 768,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 512,
  "model_type": "bert",
  "num_attention_heads": 12,
  "num_hidden_layers": 12,
  "pad_token_id": 0,
  "position_embedding_type": "absolute",
  "transformers_version": "4.6.0.dev0",
  "type_vocab_size": 2,
  "use_cache": true,
  "vocab_size": 30522
})";

// distilbert-base-uncased's config.json as published on the Hub.
const char* kDistilBase = R"({
  "activation": "gelu",
  "architectures": ["DistilBertForMaskedLM"],
  "attention_dropout": 0.1,
  "dim": 768,
  "dropout": 0.1,
  "hidden_dim": 3072,
  "initializer_range": 0.02,
  "max_position_embeddings": 512,
  "model_type": "distilbert",
  "n_heads": 12,
  "n_layers": 6,
  "pad_token_id": 0,
  "qa_dropout": 0.1,
  "seq_classif_dropout": 0.2,
  "sinusoidal_pos_embds": false,
  "tie_weights_": true,
  "transformers_version": "4.10.0.dev0",
  "vocab_size": 30522
})";

json tiny_bert() {
  return {{"model_type", "bert"},          {"vocab_size", 99},         {"hidden_size", 32},
          {"num_hidden_layers", 2},        {"num_attention_heads", 4}, {"intermediate_size", 37},
          {"max_position_embeddings", 64}, {"type_vocab_size", 2}};
}
json tiny_distil() {
  return {{"model_type", "distilbert"},
          {"vocab_size", 99},
          {"dim", 32},
          {"n_layers", 2},
          {"n_heads", 4},
          {"hidden_dim", 37},
          {"max_position_embeddings", 64}};
}

void expect_bad(const json& j, std::initializer_list<std::string> fragments) {
  try {
    config_from_json(j, "cfg.json");
    ADD_FAILURE() << "accepted " << j.dump();
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (std::getenv("CT_SHOW_ERRORS")) std::printf("%s\n", msg.c_str());
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_THAT(msg, HasSubstr("cfg.json")) << msg;
    for (const auto& f : fragments) EXPECT_THAT(msg, HasSubstr(f));
  }
}

json with(json j, const std::string& key, const json& value) {
  j[key] = value;
  return j;
}
json without(json j, const std::string& key) {
  j.erase(key);
  return j;
}

TEST(Config, ReadsPublishedBertBase) {
  const auto c = config_from_json(json::parse(kBertBase), "bert");
  EXPECT_EQ(c.model_type, "bert");
  EXPECT_FALSE(c.is_distilbert());
  EXPECT_EQ(c.vocab_size, 30522);
  EXPECT_EQ(c.hidden_size, 768);
  EXPECT_EQ(c.num_hidden_layers, 12);
  EXPECT_EQ(c.num_attention_heads, 12);
  EXPECT_EQ(c.head_dim(), 64);
  EXPECT_EQ(c.intermediate_size, 3072);
  EXPECT_EQ(c.max_position_embeddings, 512);
  EXPECT_EQ(c.type_vocab_size, 2);
  EXPECT_EQ(c.hidden_act, "gelu");
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-12);
  EXPECT_DOUBLE_EQ(c.hidden_dropout_prob, 0.1);
  EXPECT_DOUBLE_EQ(c.attention_probs_dropout_prob, 0.1);
  EXPECT_DOUBLE_EQ(c.qa_dropout, 0.0);  // BERT's QA head has no dropout
  EXPECT_EQ(c.pad_token_id, 0);
  // Uninterpreted fields are kept; those the writer owns are not.
  EXPECT_EQ(c.extra.at("transformers_version"), "4.6.0.dev0");
  EXPECT_EQ(c.extra.at("gradient_checkpointing"), false);
  EXPECT_EQ(c.extra.at("use_cache"), true);
  EXPECT_FALSE(c.extra.contains("architectures"));
  EXPECT_FALSE(c.extra.contains("hidden_size"));
  EXPECT_FALSE(c.extra.contains("model_type"));
}

TEST(Config, ReadsPublishedDistilBertBase) {
  const auto c = config_from_json(json::parse(kDistilBase), "distil");
  EXPECT_TRUE(c.is_distilbert());
  EXPECT_EQ(c.vocab_size, 30522);
  EXPECT_EQ(c.hidden_size, 768);
  EXPECT_EQ(c.num_hidden_layers, 6);
  EXPECT_EQ(c.num_attention_heads, 12);
  EXPECT_EQ(c.intermediate_size, 3072);
  EXPECT_EQ(c.type_vocab_size, 0);
  EXPECT_EQ(c.hidden_act, "gelu");
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-12);
  EXPECT_DOUBLE_EQ(c.qa_dropout, 0.1);
  EXPECT_FALSE(c.sinusoidal_pos_embds);
  EXPECT_DOUBLE_EQ(c.seq_classif_dropout, 0.2);
  EXPECT_FALSE(c.extra.contains("seq_classif_dropout"));
  EXPECT_FALSE(c.extra.contains("dim"));
}

TEST(Config, OptionalFieldsTakeHfDefaults) {
  auto b = config_from_json(tiny_bert(), "b");
  EXPECT_EQ(b.hidden_act, "gelu");
  EXPECT_DOUBLE_EQ(b.hidden_dropout_prob, 0.1);
  EXPECT_DOUBLE_EQ(b.attention_probs_dropout_prob, 0.1);
  EXPECT_DOUBLE_EQ(b.initializer_range, 0.02);
  EXPECT_DOUBLE_EQ(b.layer_norm_eps, 1e-12);
  EXPECT_EQ(b.pad_token_id, 0);
  EXPECT_TRUE(b.extra.empty());
  auto d = config_from_json(tiny_distil(), "d");
  EXPECT_DOUBLE_EQ(d.hidden_dropout_prob, 0.1);
  EXPECT_DOUBLE_EQ(d.attention_probs_dropout_prob, 0.1);
  EXPECT_DOUBLE_EQ(d.qa_dropout, 0.1);
  EXPECT_EQ(d.pad_token_id, 0);
  // Values given win over defaults, and pad_token_id null means "no padding index".
  b = config_from_json(with(with(tiny_bert(), "layer_norm_eps", 1e-5), "pad_token_id", nullptr), "b");
  EXPECT_DOUBLE_EQ(b.layer_norm_eps, 1e-5);
  EXPECT_EQ(b.pad_token_id, -1);
  d = config_from_json(with(with(tiny_distil(), "dropout", 0.0), "layer_norm_eps", 1e-5), "d");
  EXPECT_DOUBLE_EQ(d.hidden_dropout_prob, 0.0);
  EXPECT_DOUBLE_EQ(d.layer_norm_eps, 1e-12);  // not a DistilBERT field: ignored, kept in extra
  EXPECT_EQ(d.extra.at("layer_norm_eps"), 1e-5);
}

TEST(Config, WriterEmitsWhatSavePretrainedWould) {
  const auto c = config_from_json(json::parse(kBertBase), "bert");
  const std::string text = config_to_json(c);
  EXPECT_EQ(text.back(), '\n');
  const json j = json::parse(text);
  EXPECT_EQ(j.at("architectures"), json::array({"BertForQuestionAnswering"}));
  EXPECT_EQ(j.at("model_type"), "bert");
  EXPECT_EQ(j.at("torch_dtype"), "float32");
  EXPECT_EQ(j.at("transformers_version"), "4.6.0.dev0");
  EXPECT_EQ(j.at("gradient_checkpointing"), false);
  EXPECT_EQ(j.at("position_embedding_type"), "absolute");
  EXPECT_EQ(j.at("layer_norm_eps"), 1e-12);
  EXPECT_TRUE(j.at("classifier_dropout").is_null());
  for (const char* k :
       {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
        "hidden_act", "hidden_dropout_prob", "attention_probs_dropout_prob", "max_position_embeddings",
        "type_vocab_size", "initializer_range", "pad_token_id", "use_cache"})
    EXPECT_EQ(j.at(k), json::parse(kBertBase).at(k)) << k;
  EXPECT_FALSE(j.contains("dim"));
  EXPECT_FALSE(j.contains("qa_dropout"));
  // Keys sorted and indented by two, as json.dumps(indent=2, sort_keys=True).
  EXPECT_EQ(text.rfind("{\n  \"architectures\": [\n    \"BertForQuestionAnswering\"\n  ],\n", 0), 0u) << text;

  const auto d = config_from_json(json::parse(kDistilBase), "distil");
  const json dj = json::parse(config_to_json(d));
  EXPECT_EQ(dj.at("architectures"), json::array({"DistilBertForQuestionAnswering"}));
  for (const char* k :
       {"activation", "attention_dropout", "dim", "dropout", "hidden_dim", "initializer_range",
        "max_position_embeddings", "model_type", "n_heads", "n_layers", "pad_token_id", "qa_dropout",
        "seq_classif_dropout", "sinusoidal_pos_embds", "tie_weights_", "vocab_size", "transformers_version"})
    EXPECT_EQ(dj.at(k), json::parse(kDistilBase).at(k)) << k;
  for (const char* k :
       {"hidden_size", "num_hidden_layers", "type_vocab_size", "layer_norm_eps", "hidden_act"})
    EXPECT_FALSE(dj.contains(k)) << k;
}

TEST(Config, RoundTripsThroughFile) {
  const auto dir = stdfs::temp_directory_path() / str("ct_cfg_", ::getpid());
  stdfs::create_directories(dir);
  for (const char* src : {kBertBase, kDistilBase}) {
    auto c = config_from_json(json::parse(src), "src");
    c.hidden_dropout_prob = 0.25;
    c.pad_token_id = -1;
    c.extra["label2id"] = {{"A", 0}};
    const std::string path = (dir / "config.json").string();
    fs::write_file_atomic(path, config_to_json(c));
    const auto back = load_config(path);
    EXPECT_EQ(back.model_type, c.model_type);
    EXPECT_EQ(back.vocab_size, c.vocab_size);
    EXPECT_EQ(back.hidden_size, c.hidden_size);
    EXPECT_EQ(back.num_hidden_layers, c.num_hidden_layers);
    EXPECT_EQ(back.num_attention_heads, c.num_attention_heads);
    EXPECT_EQ(back.intermediate_size, c.intermediate_size);
    EXPECT_EQ(back.max_position_embeddings, c.max_position_embeddings);
    EXPECT_EQ(back.type_vocab_size, c.type_vocab_size);
    EXPECT_EQ(back.hidden_dropout_prob, 0.25);
    EXPECT_EQ(back.attention_probs_dropout_prob, c.attention_probs_dropout_prob);
    EXPECT_EQ(back.qa_dropout, c.qa_dropout);
    EXPECT_EQ(back.layer_norm_eps, c.layer_norm_eps);
    EXPECT_EQ(back.initializer_range, c.initializer_range);
    EXPECT_EQ(back.hidden_act, c.hidden_act);
    EXPECT_EQ(back.pad_token_id, -1);
    EXPECT_EQ(back.extra.at("label2id"), c.extra.at("label2id"));
    // Writing again gives the same text: nothing drifts.
    EXPECT_EQ(config_to_json(back), config_to_json(c));
  }
  stdfs::remove_all(dir);
}

// roberta-base's and google/electra-small-discriminator's config.json as published on the Hub.
const char* kRobertaBase = R"({
  "architectures": ["RobertaForMaskedLM"], "attention_probs_dropout_prob": 0.1, "bos_token_id": 0,
  "eos_token_id": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768,
  "initializer_range": 0.02, "intermediate_size": 3072, "layer_norm_eps": 1e-05, "max_position_embeddings": 514,
  "model_type": "roberta", "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 1,
  "type_vocab_size": 1, "vocab_size": 50265
})";
const char* kElectraSmall = R"({
  "architectures": ["ElectraForPreTraining"], "attention_probs_dropout_prob": 0.1, "embedding_size": 128,
  "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 256, "initializer_range": 0.02,
  "intermediate_size": 1024, "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "electra",
  "num_attention_heads": 4, "num_hidden_layers": 12, "pad_token_id": 0, "position_embedding_type": "absolute",
  "summary_activation": "gelu", "summary_last_dropout": 0.1, "summary_type": "first", "summary_use_proj": true,
  "type_vocab_size": 2, "vocab_size": 30522
})";

TEST(Config, ReadsPublishedRobertaAndElectra) {
  const auto r = config_from_json(json::parse(kRobertaBase), "roberta");
  EXPECT_EQ(r.positions, PositionScheme::after_padding_idx);
  EXPECT_EQ(r.pad_token_id, 1);
  EXPECT_EQ(r.max_position_embeddings, 514);
  EXPECT_EQ(r.type_vocab_size, 1);
  EXPECT_DOUBLE_EQ(r.layer_norm_eps, 1e-5);
  EXPECT_EQ(r.base_prefix(), "roberta.");
  EXPECT_FALSE(r.projects_embeddings());
  for (const char* type : {"xlm-roberta", "camembert"}) {
    const auto x = config_from_json(with(json::parse(kRobertaBase), "model_type", type), type);
    EXPECT_EQ(x.positions, PositionScheme::after_padding_idx) << type;
    EXPECT_EQ(x.base_prefix(), "roberta.") << type;
  }
  const auto e = config_from_json(json::parse(kElectraSmall), "electra");
  EXPECT_EQ(e.embedding_width(), 128);
  EXPECT_TRUE(e.projects_embeddings());
  EXPECT_EQ(e.positions, PositionScheme::absolute);
  EXPECT_EQ(e.base_prefix(), "electra.");
  const json ej = json::parse(config_to_json(e, HeadKind::sequence_classification));
  EXPECT_EQ(ej.at("architectures"), json::array({"ElectraForSequenceClassification"}));
  EXPECT_EQ(ej.at("embedding_size"), 128);
  EXPECT_EQ(ej.at("summary_type"), "first");
  EXPECT_EQ(ej.at("id2label").size(), 2u);  // PretrainedConfig's LABEL_0, LABEL_1
  const json rj = json::parse(config_to_json(r, HeadKind::masked_lm));
  EXPECT_EQ(rj.at("architectures"), json::array({"RobertaForMaskedLM"}));
  EXPECT_EQ(rj.at("bos_token_id"), 0);
  EXPECT_EQ(config_from_json(rj, "back").positions, PositionScheme::after_padding_idx);
}

TEST(Config, HeadFieldsFollowPretrainedConfig) {
  json j = tiny_bert();
  j["id2label"] = {{"0", "neg"}, {"1", "neu"}, {"2", "pos"}};
  j["label2id"] = {{"neg", 0}, {"neu", 1}, {"pos", 2}};
  j["problem_type"] = "multi_label_classification";
  j["classifier_dropout"] = 0.3;
  auto c = config_from_json(j, "b");
  EXPECT_EQ(c.num_labels, 3);
  EXPECT_EQ(c.problem_type, "multi_label_classification");
  EXPECT_DOUBLE_EQ(c.classifier_dropout_or_hidden(), 0.3);
  json back = json::parse(config_to_json(c, HeadKind::sequence_classification));
  EXPECT_EQ(back.at("id2label"), j.at("id2label"));  // names kept while the count holds
  EXPECT_EQ(back.at("problem_type"), "multi_label_classification");
  c.num_labels = 5;  // another task's label count: HF's LABEL_i names
  back = json::parse(config_to_json(c, HeadKind::token_classification));
  EXPECT_EQ(back.at("id2label").size(), 5u);
  EXPECT_EQ(back.at("id2label").at("4"), "LABEL_4");
  EXPECT_EQ(back.at("label2id").at("LABEL_4"), 4);
  EXPECT_EQ(back.at("architectures"), json::array({"BertForTokenClassification"}));
  const auto d = config_from_json(with(tiny_distil(), "seq_classif_dropout", 0.3), "d");
  EXPECT_DOUBLE_EQ(d.seq_classif_dropout, 0.3);
  EXPECT_EQ(head_from_name("mlm"), HeadKind::masked_lm);
  EXPECT_THROW(head_from_name("ctc"), Error);
}

TEST(Config, ArchitecturesNameTheHead) {
  EXPECT_EQ(head_from_architectures(config_from_json(json::parse(kRobertaBase), "r"), HeadKind::span),
            HeadKind::masked_lm);
  EXPECT_EQ(head_from_architectures(config_from_json(json::parse(kElectraSmall), "e"), HeadKind::span),
            HeadKind::span);  // ElectraForPreTraining: no head of ours
  for (HeadKind h : {HeadKind::span, HeadKind::sequence_classification, HeadKind::token_classification,
                     HeadKind::masked_lm, HeadKind::multiple_choice}) {
    const auto c =
        config_from_json(json::parse(config_to_json(config_from_json(tiny_bert(), "b"), h)), "back");
    EXPECT_EQ(head_from_architectures(c, HeadKind::span), h) << head_name(h);
  }
  EXPECT_EQ(head_from_architectures(config_from_json(tiny_bert(), "b"), HeadKind::token_classification),
            HeadKind::token_classification);
}

TEST(ConfigBad, FamilyFieldsNamed) {
  json r = json::parse(kRobertaBase);
  expect_bad(with(r, "pad_token_id", nullptr), {"\"pad_token_id\"", "padding index"});
  expect_bad(with(r, "position_embedding_type", "relative_key_query"),
             {"position_embedding_type", "relative_key_query"});
  expect_bad(with(r, "is_decoder", true), {"\"is_decoder\""});
  expect_bad(with(json::parse(kElectraSmall), "embedding_size", 0), {"\"embedding_size\""});
  expect_bad(with(tiny_bert(), "problem_type", "ranking"), {"\"problem_type\"", "ranking"});
  expect_bad(with(tiny_bert(), "id2label", json::array()), {"\"id2label\""});
  expect_bad(with(tiny_bert(), "classifier_dropout", 1.0), {"\"classifier_dropout\""});
}

TEST(ConfigBad, MissingOrUnreadableFile) {
  const auto dir = stdfs::temp_directory_path() / str("ct_cfg_bad_", ::getpid());
  stdfs::create_directories(dir);
  const std::string missing = (dir / "absent.json").string();
  try {
    load_config(missing);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(missing));
  }
  const std::string garbled = (dir / "config.json").string();
  fs::write_file_atomic(garbled, "{\"model_type\": \"bert\",");
  try {
    load_config(garbled);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(garbled));
    EXPECT_THAT(e.what(), HasSubstr("not valid JSON"));
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  EXPECT_THROW(load_config(dir.string()), Error);  // a folder
  stdfs::remove_all(dir);
}

TEST(ConfigBad, NotAnObject) {
  expect_bad(json::array({1, 2}), {"array", "expected an object"});
}

TEST(ConfigBad, UnknownOrMissingModelType) {
  expect_bad(with(tiny_bert(), "model_type", "longformer"),
             {"model_type", "longformer", "bert", "distilbert", "roberta", "xlm-roberta", "electra"});
  expect_bad(without(tiny_bert(), "model_type"), {"missing required field \"model_type\""});
  expect_bad(with(tiny_bert(), "model_type", 3), {"model_type", "string"});
}

TEST(ConfigBad, MissingArchitectureFields) {
  for (const char* k : {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                        "intermediate_size", "max_position_embeddings", "type_vocab_size"})
    expect_bad(without(tiny_bert(), k), {str("missing required field \"", k, "\"")});
  for (const char* k : {"vocab_size", "dim", "n_layers", "n_heads", "hidden_dim", "max_position_embeddings"})
    expect_bad(without(tiny_distil(), k), {str("missing required field \"", k, "\"")});
  // BERT's names do not stand in for DistilBERT's.
  json d = without(tiny_distil(), "dim");
  d["hidden_size"] = 32;
  expect_bad(d, {"\"dim\""});
}

TEST(ConfigBad, WrongJsonTypes) {
  expect_bad(with(tiny_bert(), "hidden_size", "768"), {"\"hidden_size\"", "an integer", "string"});
  expect_bad(with(tiny_bert(), "hidden_size", 32.5), {"\"hidden_size\"", "an integer"});
  expect_bad(with(tiny_bert(), "num_hidden_layers", true), {"\"num_hidden_layers\"", "an integer"});
  expect_bad(with(tiny_bert(), "hidden_dropout_prob", "0.1"), {"\"hidden_dropout_prob\"", "a number"});
  expect_bad(with(tiny_bert(), "hidden_act", 1), {"\"hidden_act\"", "a string"});
  expect_bad(with(tiny_bert(), "pad_token_id", "0"), {"\"pad_token_id\""});
  expect_bad(with(tiny_distil(), "sinusoidal_pos_embds", 0), {"\"sinusoidal_pos_embds\"", "true or false"});
  expect_bad(with(tiny_distil(), "n_layers", json::array({2})), {"\"n_layers\"", "array"});
}

TEST(ConfigBad, NonPositiveSizes) {
  expect_bad(with(tiny_bert(), "hidden_size", 0), {"\"hidden_size\"", "positive", "0"});
  expect_bad(with(tiny_bert(), "num_hidden_layers", -1), {"\"num_hidden_layers\"", "-1"});
  expect_bad(with(tiny_bert(), "vocab_size", 0), {"\"vocab_size\""});
  expect_bad(with(tiny_bert(), "type_vocab_size", 0), {"\"type_vocab_size\""});
  expect_bad(with(tiny_bert(), "max_position_embeddings", 0), {"\"max_position_embeddings\""});
  expect_bad(with(tiny_distil(), "hidden_dim", 0), {"\"hidden_dim\""});
  expect_bad(with(tiny_distil(), "n_heads", -4), {"\"n_heads\""});
  expect_bad(with(tiny_bert(), "layer_norm_eps", 0.0), {"\"layer_norm_eps\""});
  expect_bad(with(tiny_bert(), "initializer_range", -0.02), {"\"initializer_range\""});
}

TEST(ConfigBad, HiddenNotDivisibleByHeads) {
  expect_bad(with(tiny_bert(), "num_attention_heads", 5),
             {"\"hidden_size\" 32", "\"num_attention_heads\" 5"});
  expect_bad(with(tiny_distil(), "n_heads", 3), {"\"dim\" 32", "\"n_heads\" 3"});
}

TEST(ConfigBad, DropoutOutsideUnitInterval) {
  expect_bad(with(tiny_bert(), "hidden_dropout_prob", 1.0), {"\"hidden_dropout_prob\"", "[0, 1)"});
  expect_bad(with(tiny_bert(), "attention_probs_dropout_prob", -0.1), {"\"attention_probs_dropout_prob\""});
  expect_bad(with(tiny_distil(), "dropout", 1.5), {"\"dropout\""});
  expect_bad(with(tiny_distil(), "attention_dropout", 1.0), {"\"attention_dropout\""});
  expect_bad(with(tiny_distil(), "qa_dropout", -1), {"\"qa_dropout\""});
}

TEST(ConfigBad, UnsupportedArchitectureVariants) {
  expect_bad(with(tiny_bert(), "hidden_act", "swish"), {"\"hidden_act\"", "swish", "gelu"});
  expect_bad(with(tiny_distil(), "activation", "silu"), {"\"activation\"", "silu"});
  EXPECT_EQ(config_from_json(with(tiny_distil(), "activation", "relu"), "d").hidden_act, "relu");
  EXPECT_EQ(config_from_json(with(tiny_bert(), "hidden_act", "gelu_new"), "b").hidden_act, "gelu_new");
  expect_bad(with(tiny_distil(), "sinusoidal_pos_embds", true), {"\"sinusoidal_pos_embds\""});
  expect_bad(with(tiny_bert(), "position_embedding_type", "relative_key"),
             {"position_embedding_type", "relative_key"});
  expect_bad(with(tiny_bert(), "pad_token_id", 99), {"\"pad_token_id\" 99", "vocabulary of 99"});
  expect_bad(with(tiny_bert(), "pad_token_id", -2), {"\"pad_token_id\""});
}

}  // namespace
}  // namespace ct::model

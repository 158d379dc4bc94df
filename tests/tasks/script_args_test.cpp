// Each command's flags: HF's defaults, the issue's seed-style command lines, the scripts' __post_init__
// errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "core/error.h"
#include "tasks/masked_lm/mlm_args.h"
#include "tasks/multiple_choice/swag_args.h"
#include "tasks/sequence_classification/classification_args.h"
#include "tasks/sequence_classification/glue_args.h"
#include "tasks/token_classification/ner_args.h"

using testing::HasSubstr;
using testing::ThrowsMessage;
using V = std::vector<std::string>;

TEST(ScriptArgs, GlueSeedCommandLineAndDefaults) {
  const auto a = ct::tasks::parse_glue_args(
      {"--model_name_or_path", "google-bert/bert-base-cased", "--task_name", "MRPC", "--do_train",
       "--do_eval", "--max_seq_length", "128", "--per_device_train_batch_size", "32", "--learning_rate",
       "2e-5", "--num_train_epochs", "3", "--output_dir", "/tmp/mrpc/", "--no_cuda", "--ddp_backend", "ccl"});
  EXPECT_EQ("mrpc", a.data.task_name);  // lower-cased, as __post_init__
  EXPECT_TRUE(a.data.pad_to_max_length);
  EXPECT_EQ(32, a.training.per_device_train_batch_size);
  EXPECT_DOUBLE_EQ(2e-5, a.training.learning_rate);
  EXPECT_TRUE(a.training.use_cpu);
  EXPECT_THAT(a.notes, testing::Contains(HasSubstr("--no_cuda")));
  const auto d =
      ct::tasks::parse_glue_args({"--model_name_or_path", "m", "--task_name", "sst2", "--output_dir", "o"});
  EXPECT_EQ(128, d.data.max_seq_length);
  EXPECT_EQ(-1, d.data.max_train_samples);
  EXPECT_TRUE(d.model_extra.use_fast_tokenizer);
  EXPECT_FALSE(d.model_extra.ignore_mismatched_sizes);
}

TEST(ScriptArgs, GlueRefusesWhatRunGlueRefuses) {
  auto parse = [](V extra) {
    V argv{"--model_name_or_path", "m", "--output_dir", "o"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return ct::tasks::parse_glue_args(argv);
  };
  EXPECT_THAT([&] { parse({"--task_name", "sst-2"}); }, ThrowsMessage<ct::Error>(HasSubstr("unknown task")));
  EXPECT_THAT(
      [&] {
        parse({"--train_file", "t.csv"});
      },
      ThrowsMessage<ct::Error>(HasSubstr("need either a GLUE task")));
  EXPECT_THAT(
      [&] {
        parse({"--train_file", "t.tsv", "--validation_file", "v.tsv"});
      },
      ThrowsMessage<ct::Error>(HasSubstr("--train_file t.tsv: expected a csv, json file")));
  EXPECT_THAT(
      [&] {
        parse({"--train_file", "t.csv", "--validation_file", "v.json"});
      },
      ThrowsMessage<ct::Error>(HasSubstr("same extension")));
  EXPECT_THAT(
      [&] {
        parse({"--task_name", "mrpc", "--label_all_tokens"});
      },
      ThrowsMessage<ct::Error>(HasSubstr("unknown flag --label_all_tokens (see `coretrain glue --help`)")));
  EXPECT_THAT(
      [] {
        ct::tasks::parse_glue_args({"--task_name", "mrpc", "--output_dir", "o"});
      },
      ThrowsMessage<ct::Error>(HasSubstr("--model_name_or_path: required")));
  EXPECT_NO_THROW(parse({"--train_file", "t.csv", "--validation_file", "v.csv"}));
  EXPECT_NO_THROW(parse({"--dataset_name", "org/data"}));
}

TEST(ScriptArgs, NerDefaultsAndFlags) {
  const auto a = ct::tasks::parse_ner_args(
      {"--model_name_or_path", "FacebookAI/roberta-base", "--dataset_name", "conll2003", "--output_dir", "o",
       "--do_train", "--label_all_tokens", "--return_entity_level_metrics", "--task_name", "POS"});
  EXPECT_EQ("pos", a.data.task_name);
  EXPECT_TRUE(a.data.label_all_tokens);
  EXPECT_TRUE(a.data.return_entity_level_metrics);
  EXPECT_FALSE(a.data.pad_to_max_length);
  EXPECT_EQ(-1, a.data.max_seq_length);
  EXPECT_THAT(
      [] {
        ct::tasks::parse_ner_args({"--model_name_or_path", "m", "--output_dir", "o"});
      },
      ThrowsMessage<ct::Error>(HasSubstr("need either a dataset name")));
  EXPECT_THAT(
      [] {
        ct::tasks::parse_ner_args(
            {"--model_name_or_path", "m", "--output_dir", "o", "--train_file", "x.txt"});
      },
      ThrowsMessage<ct::Error>(HasSubstr("--train_file x.txt: expected a csv, json file")));
}

TEST(ScriptArgs, MlmTrainsFromScratchAndKeepsRunMlmsRules) {
  const auto a =
      ct::tasks::parse_mlm_args({"--model_type", "bert", "--train_file", "corpus.txt", "--output_dir", "o",
                                 "--line_by_line", "--mlm_probability", "0.2"});
  EXPECT_EQ("bert", a.model_extra.model_type);
  EXPECT_TRUE(a.data.line_by_line);
  EXPECT_DOUBLE_EQ(0.2, a.data.mlm_probability);
  EXPECT_EQ(5, a.data.validation_split_percentage);
  const auto d =
      ct::tasks::parse_mlm_args({"--model_name_or_path", "m", "--dataset_name", "wikitext",
                                 "--dataset_config_name", "wikitext-2-raw-v1", "--output_dir", "o"});
  EXPECT_DOUBLE_EQ(0.15, d.data.mlm_probability);
  EXPECT_THAT(
      [] {
        ct::tasks::parse_mlm_args({"--train_file", "c.txt", "--output_dir", "o"});
      },
      ThrowsMessage<ct::Error>(HasSubstr("or --config_name / --model_type to train from scratch")));
  EXPECT_THAT(
      [] {
        ct::tasks::parse_mlm_args({"--model_name_or_path", "m", "--config_overrides", "a=1", "--train_file",
                                   "c.txt", "--output_dir", "o"});
      },
      ThrowsMessage<ct::Error>(HasSubstr("--config_overrides can't be used in combination")));
  EXPECT_THAT(
      [] {
        ct::tasks::parse_mlm_args(
            {"--model_type", "bert", "--train_file", "c.txt", "--output_dir", "o", "--streaming"});
      },
      ThrowsMessage<ct::Error>(HasSubstr("--streaming: not supported")));
}

TEST(ScriptArgs, SwagAndClassification) {
  const auto s = ct::tasks::parse_swag_args({"--model_name_or_path", "m", "--output_dir", "o", "--do_train"});
  EXPECT_TRUE(s.data.train_file.empty());  // the Hub's swag
  EXPECT_FALSE(s.data.pad_to_max_length);
  const auto c = ct::tasks::parse_classification_args(
      {"--model_name_or_path", "m", "--output_dir", "o", "--dataset_name", "org/reviews",
       "--text_column_names", "title,review", "--remove_columns", "id", "--shuffle_train_dataset"});
  EXPECT_FALSE(c.data.do_regression.has_value());  // None: decided from the labels
  EXPECT_THAT(ct::tasks::split_commas(c.data.text_column_names), testing::ElementsAre("title", "review"));
  EXPECT_EQ(" ", c.data.text_column_delimiter);
  EXPECT_EQ(42, c.data.shuffle_seed);
  EXPECT_TRUE(c.data.shuffle_train_dataset);
  const auto r = ct::tasks::parse_classification_args(
      {"--model_name_or_path", "m", "--output_dir", "o", "--dataset_name", "d", "--do_regression", "false"});
  ASSERT_TRUE(r.data.do_regression.has_value());
  EXPECT_FALSE(*r.data.do_regression);
  EXPECT_THAT(
      [] {
        ct::tasks::parse_classification_args({"--model_name_or_path", "m", "--output_dir", "o"});
      },
      ThrowsMessage<ct::Error>(HasSubstr("need either a training/validation file")));
}

TEST(ScriptArgs, JsonArgvAndHelp) {
  const std::string path = testing::TempDir() + "/glue_args.json";
  std::ofstream(path) << R"({"model_name_or_path": "m", "task_name": "rte", "output_dir": "o",
                             "max_train_samples": null, "pad_to_max_length": false})";
  const auto a = ct::tasks::parse_glue_args({path});
  EXPECT_EQ("rte", a.data.task_name);
  EXPECT_FALSE(a.data.pad_to_max_length);
  EXPECT_EQ(-1, a.data.max_train_samples);
  std::remove(path.c_str());
  const std::string help = ct::tasks::glue_args_help();
  EXPECT_THAT(help, HasSubstr("usage: coretrain glue"));
  EXPECT_THAT(help, HasSubstr("--max_seq_length (default: 128)"));
  EXPECT_THAT(help, HasSubstr("--learning_rate (default: 5e-05)"));
  EXPECT_THAT(ct::tasks::classification_args_help(), HasSubstr("--do_regression (default: None)"));
  EXPECT_THAT(ct::tasks::ner_args_help(), HasSubstr("--task_name (default: ner)"));
  EXPECT_THAT(ct::tasks::mlm_args_help(), HasSubstr("--mlm_probability (default: 0.15)"));
  EXPECT_THAT(ct::tasks::swag_args_help(), HasSubstr("HF run_swag.py"));
  EXPECT_TRUE(ct::tasks::parse_swag_args({"--help"}).help);
}

// --demo: the demo's defaults under the flags given, the data and model pointed at <output_dir>/demo_data/,
// and the batch a global one unless --per_device_train_batch_size is given.
TEST(ScriptArgs, Demo) {
  const auto g = ct::tasks::parse_glue_args({"--demo", "--output_dir", "/tmp/d", "--num_train_epochs", "1"});
  EXPECT_TRUE(g.demo);
  EXPECT_TRUE(g.demo_global_batch);
  EXPECT_TRUE(g.training.do_train && g.training.do_eval && g.training.overwrite_output_dir);
  EXPECT_DOUBLE_EQ(1, g.training.num_train_epochs);  // the flag over the demo's 3
  EXPECT_EQ(32, g.training.per_device_train_batch_size);
  EXPECT_FALSE(g.data.pad_to_max_length);
  EXPECT_EQ("/tmp/d/demo_data/train.json", g.data.train_file);
  EXPECT_EQ("/tmp/d/demo_data", g.model.config_name);
  EXPECT_EQ("/tmp/d/demo_data", g.model.tokenizer_name);
  const auto m = ct::tasks::parse_mlm_args({"--demo", "--per_device_train_batch_size=8"});
  EXPECT_FALSE(m.demo_global_batch);
  EXPECT_EQ("demo-out-mlm/demo_data/validation.txt", m.data.validation_file);
  EXPECT_EQ(32, m.data.max_seq_length);
  const auto n = ct::tasks::parse_ner_args({"--demo", "--model_name_or_path", "x", "--train_file", "t.json"});
  EXPECT_EQ("", n.model.config_name);  // a model given: the demo trains it
  EXPECT_EQ("t.json", n.data.train_file);
  EXPECT_FALSE(ct::tasks::parse_swag_args({"--model_name_or_path", "x", "--output_dir", "o"}).demo);
  EXPECT_THAT(ct::tasks::classification_args_help(), HasSubstr("coretrain classification --demo"));
}

// --demo from a JSON argv is the demo as on the command line (its defaults under the file's other keys, the
// batch a global one unless the file sets it); --demo false is no demo and gets none of its defaults.
TEST(ScriptArgs, DemoFromJsonArgvAndDemoFalse) {
  const std::string path = testing::TempDir() + "/demo_args.json";
  std::ofstream(path) << R"({"demo": true, "output_dir": "/tmp/j", "num_train_epochs": 1})";
  const auto g = ct::tasks::parse_glue_args({path});
  EXPECT_TRUE(g.demo);
  EXPECT_TRUE(g.demo_global_batch);
  EXPECT_TRUE(g.training.do_train && g.training.do_eval);
  EXPECT_DOUBLE_EQ(1, g.training.num_train_epochs);
  EXPECT_EQ("/tmp/j/demo_data/train.json", g.data.train_file);
  std::ofstream(path) << R"({"demo": true, "per_device_train_batch_size": 8})";
  const auto m = ct::tasks::parse_mlm_args({path});
  EXPECT_TRUE(m.demo);
  EXPECT_FALSE(m.demo_global_batch);
  EXPECT_EQ(8, m.training.per_device_train_batch_size);
  EXPECT_EQ("demo-out-mlm/demo_data/validation.txt", m.data.validation_file);
  std::remove(path.c_str());
  const auto off = ct::tasks::parse_glue_args(
      {"--demo", "false", "--model_name_or_path", "m", "--task_name", "rte", "--output_dir", "o"});
  EXPECT_FALSE(off.demo);
  EXPECT_FALSE(off.training.do_train);  // none of the demo's defaults
  EXPECT_EQ(128, off.data.max_seq_length);
}

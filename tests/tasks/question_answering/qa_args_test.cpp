#include "tasks/question_answering/qa_args.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "core/error.h"

using ct::tasks::parse_qa_args;

namespace {

std::vector<std::string> base() {
  return {"--model_name_or_path", "m", "--output_dir", "o"};
}

std::vector<std::string> with(std::vector<std::string> extra) {
  auto v = base();
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}

// The error text for a bad argv; fails the test when parsing succeeds.
std::string error_of(const std::vector<std::string>& argv) {
  try {
    parse_qa_args(argv);
  } catch (const ct::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(TrainingArgs, HfDefaults) {
  auto a = parse_qa_args(base());
  EXPECT_EQ(a.training.per_device_train_batch_size, 8);
  EXPECT_EQ(a.training.per_device_eval_batch_size, 8);
  EXPECT_DOUBLE_EQ(a.training.learning_rate, 5e-5);
  EXPECT_DOUBLE_EQ(a.training.num_train_epochs, 3.0);
  EXPECT_EQ(a.training.max_steps, -1);
  EXPECT_EQ(a.training.lr_scheduler_type, "linear");
  EXPECT_DOUBLE_EQ(a.training.max_grad_norm, 1.0);
  EXPECT_DOUBLE_EQ(a.training.adam_beta2, 0.999);
  EXPECT_DOUBLE_EQ(a.training.adam_epsilon, 1e-8);
  EXPECT_EQ(a.training.seed, 42);
  EXPECT_EQ(a.training.optim, "adamw_torch");
  EXPECT_EQ(a.training.resolved_logging_steps(10000), 500);
  EXPECT_EQ(a.training.resolved_eval_steps(10000), 500);
  EXPECT_EQ(a.data.max_seq_length, 384);
  EXPECT_EQ(a.data.doc_stride, 128);
  EXPECT_EQ(a.data.n_best_size, 20);
  EXPECT_EQ(a.data.max_answer_length, 30);
  EXPECT_TRUE(a.data.pad_to_max_length);
  EXPECT_FALSE(a.training.do_train);
}

TEST(TrainingArgs, TheGuideCommandLine) {
  auto a = parse_qa_args({"--model_name_or_path",
                          "bert",
                          "--train_file",
                          "t.json",
                          "--validation_file",
                          "d.json",
                          "--do_train",
                          "--do_eval",
                          "--per_device_train_batch_size",
                          "12",
                          "--learning_rate",
                          "3e-5",
                          "--num_train_epochs",
                          "2",
                          "--max_seq_length",
                          "384",
                          "--doc_stride",
                          "128",
                          "--output_dir",
                          "out",
                          "--no_cuda",
                          "--bf16",
                          "--xpu_backend",
                          "ccl",
                          "--use_ipex"});
  EXPECT_TRUE(a.training.do_train && a.training.do_eval && a.training.bf16 && a.training.use_cpu);
  EXPECT_EQ(a.training.per_device_train_batch_size, 12);
  EXPECT_DOUBLE_EQ(a.training.learning_rate, 3e-5);
  EXPECT_EQ(a.training.ddp_backend, "ccl");
  EXPECT_GE(a.notes.size(), 3u);  // no_cuda, xpu_backend, use_ipex
}

TEST(TrainingArgs, ValueSpellingsAndBools) {
  auto a = parse_qa_args(
      with({"--seed=7", "--do_train", "false", "--do_eval", "true", "--bf16=yes", "--no_pad_to_max_length",
            "--evaluation_strategy", "steps", "--eval_steps", "0.25", "--warmup_ratio", "0.1",
            "--per-device-eval-batch-size", "3", "--validation_file", "v"}));
  EXPECT_EQ(a.training.seed, 7);
  EXPECT_FALSE(a.training.do_train);
  EXPECT_TRUE(a.training.do_eval);
  EXPECT_TRUE(a.training.bf16);
  EXPECT_FALSE(a.data.pad_to_max_length);
  EXPECT_EQ(a.training.eval_strategy, "steps");
  EXPECT_EQ(a.training.resolved_eval_steps(100), 25);
  EXPECT_EQ(a.training.per_device_eval_batch_size, 3);
}

TEST(TrainingArgs, JsonArgvIsTheWholeSet) {
  auto path = std::filesystem::temp_directory_path() / ("ct_args_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path)
      << R"({"model_name_or_path": "m", "output_dir": "o", "do_train": true, "train_file": "t",
                            "learning_rate": 0.001, "max_steps": 6, "save_total_limit": null, "logging_steps": 2})";
  auto a = parse_qa_args({path.string()});
  EXPECT_TRUE(a.training.do_train);
  EXPECT_DOUBLE_EQ(a.training.learning_rate, 1e-3);
  EXPECT_EQ(a.training.max_steps, 6);
  EXPECT_EQ(a.training.resolved_logging_steps(6), 2);
  std::ofstream(path) << R"({"output_dir": "o", "model_name_or_path": "m", "bogus": 1})";
  EXPECT_NE(error_of({path.string()}).find("bogus"), std::string::npos);
  std::ofstream(path) << R"({"output_dir": "o", )";
  EXPECT_NE(error_of({path.string()}).find("not valid JSON"), std::string::npos);
  std::filesystem::remove(path);
  EXPECT_NE(error_of({path.string()}).find(path.string()), std::string::npos);
}

// qa --demo read from a JSON argv: the demo's defaults under the file's keys, the batch a global one unless
// the file sets it; `--demo false` gets none of the demo's defaults.
TEST(TrainingArgs, DemoFromJsonArgvAndDemoFalse) {
  auto path = std::filesystem::temp_directory_path() / ("ct_demo_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << R"({"demo": true, "num_train_epochs": 1})";
  auto a = parse_qa_args({path.string()});
  EXPECT_TRUE(a.coretrain.demo);
  EXPECT_TRUE(a.coretrain.demo_global_batch);
  EXPECT_TRUE(a.training.do_train && a.training.do_eval);
  EXPECT_DOUBLE_EQ(a.training.num_train_epochs, 1);
  EXPECT_EQ(a.data.max_seq_length, 192);  // the demo's
  std::ofstream(path) << R"({"demo": true, "per_device_train_batch_size": 4})";
  a = parse_qa_args({path.string()});
  EXPECT_FALSE(a.coretrain.demo_global_batch);
  EXPECT_EQ(a.training.per_device_train_batch_size, 4);
  std::filesystem::remove(path);
  auto off = parse_qa_args(
      {"--demo", "false", "--model_name_or_path", "m", "--output_dir", "o", "--train_file", "t.json"});
  EXPECT_FALSE(off.coretrain.demo);
  EXPECT_FALSE(off.training.do_train);
  EXPECT_EQ(off.data.max_seq_length, 384);
}

TEST(TrainingArgs, EveryBadValueNamesItsFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--learning_rate", "-1"}, "--learning_rate"},
      {{"--learning_rate", "abc"}, "--learning_rate"},
      {{"--per_device_train_batch_size", "0"}, "--per_device_train_batch_size"},
      {{"--per_device_eval_batch_size", "-2"}, "--per_device_eval_batch_size"},
      {{"--gradient_accumulation_steps", "0"}, "--gradient_accumulation_steps"},
      {{"--doc_stride", "384"}, "--doc_stride"},
      {{"--max_seq_length", "100", "--doc_stride", "128"}, "--doc_stride"},
      {{"--max_seq_length", "0"}, "--max_seq_length"},
      {{"--n_best_size", "0"}, "--n_best_size"},
      {{"--max_answer_length", "0"}, "--max_answer_length"},
      {{"--num_train_epochs", "-1"}, "--num_train_epochs"},
      {{"--max_steps", "0"}, "--max_steps"},
      {{"--warmup_ratio", "1.5"}, "--warmup_ratio"},
      {{"--warmup_steps", "-3"}, "--warmup_steps"},
      {{"--weight_decay", "-0.1"}, "--weight_decay"},
      {{"--adam_beta1", "1"}, "--adam_beta1"},
      {{"--adam_beta2", "-0.5"}, "--adam_beta2"},
      {{"--adam_epsilon", "-1e-8"}, "--adam_epsilon"},
      {{"--max_grad_norm", "-1"}, "--max_grad_norm"},
      {{"--logging_steps", "0"}, "--logging_steps"},
      {{"--save_steps", "2.5"}, "--save_steps"},
      {{"--eval_steps", "0"}, "--eval_steps"},
      {{"--save_total_limit", "0"}, "--save_total_limit"},
      {{"--max_train_samples", "0"}, "--max_train_samples"},
      {{"--seed", "x"}, "--seed"},
      {{"--lr_scheduler_type", "polynomial"}, "--lr_scheduler_type"},
      {{"--optim", "adafactor"}, "--optim"},
      {{"--eval_strategy", "sometimes"}, "--eval_strategy"},
      {{"--ddp_backend", "nccl"}, "--ddp_backend"},
      {{"--xpu_backend", "nccl"}, "--ddp_backend"},
      {{"--bf16", "maybe"}, "unexpected argument 'maybe'"},
      {{"--do_train=maybe"}, "--do_train"},
      {{"--frobnicate", "1"}, "unknown flag --frobnicate"},
      {{"--seed"}, "--seed: expects a value"},
      {{"--learning_rate", "--seed", "1"}, "--learning_rate: expects a value"},
      {{"stray"}, "unexpected argument 'stray'"},
      {{"--dataset_name", "squad_v3"}, "--dataset_name: 'squad_v3' is not available"},
      {{"--dataset_name", "squad", "--dataset_config_name", "x"}, "--dataset_config_name"},
      {{"--dataset_name", "squad", "--do_predict"}, "--do_predict requires a test dataset"},
      {{"--do_predict"}, "--test_file"},
      {{"--do_train"}, "--train_file"},
      {{"--do_eval"}, "--validation_file"},
      {{"--load_best_model_at_end"}, "--load_best_model_at_end"},
  };
  for (const auto& [extra, expect] : cases) {
    std::string e = error_of(with(extra));
    EXPECT_NE(e.find(expect), std::string::npos) << "argv extra " << extra[0] << " gave: " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_NE(error_of({"--model_name_or_path", "m"}).find("--output_dir"), std::string::npos);
  EXPECT_NE(error_of({"--output_dir", "o"}).find("--model_name_or_path"), std::string::npos);
}

TEST(TrainingArgs, EvalStrategyImpliesDoEvalAndJsonHasHfKeys) {
  auto a = parse_qa_args(with({"--eval_strategy", "epoch", "--validation_file", "v"}));
  EXPECT_TRUE(a.training.do_eval);
  auto j = ct::train::training_args_to_json(a.training);
  for (const char* k :
       {"output_dir", "learning_rate", "per_device_train_batch_size", "lr_scheduler_type", "seed",
        "save_total_limit", "eval_strategy", "max_grad_norm", "warmup_ratio", "optim"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_TRUE(j["save_total_limit"].is_null());
}

TEST(TrainingArgs, GroupByLengthAsHf) {
  auto a = parse_qa_args(base());
  EXPECT_FALSE(a.training.group_by_length);
  EXPECT_EQ(a.training.length_column_name, "length");
  auto j = ct::train::training_args_to_json(a.training);
  EXPECT_EQ(j["group_by_length"], false);
  EXPECT_EQ(j["length_column_name"], "length");
  for (const auto& argv :
       {with({"--group_by_length"}), with({"--group_by_length", "True"}), with({"--group-by-length=true"})})
    EXPECT_TRUE(parse_qa_args(argv).training.group_by_length);
  EXPECT_FALSE(parse_qa_args(with({"--group_by_length", "false"})).training.group_by_length);
  a = parse_qa_args(with({"--group_by_length", "--length_column_name", "n_tokens"}));
  j = ct::train::training_args_to_json(a.training);
  EXPECT_EQ(j["group_by_length"], true);
  EXPECT_EQ(j["length_column_name"], "n_tokens");
  EXPECT_NE(ct::tasks::qa_args_help().find("--group_by_length (default: false)"), std::string::npos);
}

TEST(TrainingArgs, HelpListsFlagsWithDefaults) {
  auto a = parse_qa_args({"--help"});
  EXPECT_TRUE(a.help);
  auto h = ct::tasks::qa_args_help();
  EXPECT_NE(h.find("--per_device_train_batch_size (default: 8)"), std::string::npos);
  EXPECT_NE(h.find("--doc_stride (default: 128)"), std::string::npos);
  EXPECT_NE(h.find("--no_cuda"), std::string::npos);
}

}  // namespace

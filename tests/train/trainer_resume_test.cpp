// The Trainer end to end in-process on a tiny BERT and a small generated set: resume equality (weights bytes
// of a run resumed from checkpoint-3 to step 6 == a run straight to 6, dropout on, accumulation and an epoch
// boundary inside), the output folder HF writes, checkpoint contents, save_total_limit, and the output_dir
// rule.
#include <gtest/gtest.h>

#include <unistd.h>
#include "demo_workspace.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "model/config.h"
#include "model/param_layout.h"
#include "tasks/question_answering/run_qa.h"
#include "tasks/question_answering/squad_demo_data.h"
#include "text/tokenizer.h"
#include "train/checkpoint.h"
#include "train/stop_signal.h"

namespace stdfs = std::filesystem;
using namespace ct::train;
using ct::tasks::parse_qa_args;
using ct::tasks::run_qa;

namespace {

class TrainerRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = (stdfs::temp_directory_path() / ("ct_trainer_" + std::to_string(::getpid()))).string();
    ct::model::ModelConfig c;
    c.hidden_size = 32;
    c.num_hidden_layers = 1;
    c.num_attention_heads = 2;
    c.intermediate_size = 64;
    c.max_position_embeddings = 128;
    c.hidden_dropout_prob = 0.1;  // dropout on: resume must restore its counter
    c.attention_probs_dropout_prob = 0.1;
    ct::train::test::write_demo_workspace(root_, /*seed=*/3, /*train_paragraphs=*/10, /*eval_paragraphs=*/4,
                                          c);
  }
  static void TearDownTestSuite() { stdfs::remove_all(root_); }

  static std::vector<std::string> args(const std::string& out, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"--config_name",
                                  root_ + "/model",
                                  "--tokenizer_name",
                                  root_ + "/model",
                                  "--train_file",
                                  root_ + "/train.json",
                                  "--validation_file",
                                  root_ + "/dev.json",
                                  "--do_train",
                                  "--output_dir",
                                  out,
                                  "--per_device_train_batch_size",
                                  "4",
                                  "--gradient_accumulation_steps",
                                  "2",
                                  "--max_seq_length",
                                  "96",
                                  "--doc_stride",
                                  "32",
                                  "--learning_rate",
                                  "3e-3",
                                  "--warmup_steps",
                                  "2",
                                  "--weight_decay",
                                  "0.01",
                                  "--logging_steps",
                                  "1",
                                  "--save_steps",
                                  "3",
                                  "--seed",
                                  "7",
                                  "--disable_tqdm"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  static RunResult run(const std::vector<std::string>& a) { return run_qa(parse_qa_args(a)); }

  static std::string root_;
};
std::string TrainerRun::root_;

TEST_F(TrainerRun, ResumeFromCheckpointEndsWithIdenticalWeights) {
  const std::string a = root_ + "/straight", b = root_ + "/resumed";
  run(args(a, {"--max_steps", "6"}));
  ASSERT_TRUE(stdfs::exists(a + "/checkpoint-3/model.safetensors"));
  ASSERT_TRUE(stdfs::exists(a + "/checkpoint-6/optimizer.safetensors"));
  // The run stops after step 3 (as if killed), then resumes with the original plan from its checkpoint.
  run(args(b, {"--max_steps", "6", "--resume_from_checkpoint", a + "/checkpoint-3"}));
  EXPECT_EQ(ct::fs::read_file(a + "/model.safetensors"), ct::fs::read_file(b + "/model.safetensors"));
  // And a model that did not resume its state differs (the test can fail).
  const std::string c = root_ + "/fresh3";
  run(args(c, {"--max_steps", "6", "--seed", "8"}));
  EXPECT_NE(ct::fs::read_file(a + "/model.safetensors"), ct::fs::read_file(c + "/model.safetensors"));

  // Auto-resume: output_dir with checkpoints and no --overwrite_output_dir continues from the latest.
  const std::string d = root_ + "/auto";
  stdfs::create_directories(d);
  stdfs::copy(a + "/checkpoint-3", d + "/checkpoint-3", stdfs::copy_options::recursive);
  run(args(d, {"--max_steps", "6"}));
  EXPECT_EQ(ct::fs::read_file(a + "/model.safetensors"), ct::fs::read_file(d + "/model.safetensors"));
  auto state = read_json(d + "/trainer_state.json");
  EXPECT_EQ(state["global_step"], 6);
}

// --group_by_length reaches the sampler (the weights differ from the plain order's), its order is a function
// of (seed, epoch) so a resumed run skips to the same place, and training_args.json records the flag.
TEST_F(TrainerRun, GroupByLengthResumesAndIsRecorded) {
  const std::string a = root_ + "/grouped", b = root_ + "/grouped_resumed", c = root_ + "/ungrouped";
  const std::vector<std::string> grouped = {"--max_steps", "6", "--pad_to_max_length", "false",
                                            "--group_by_length"};
  run(args(a, grouped));
  auto resumed = grouped;
  resumed.insert(resumed.end(), {"--resume_from_checkpoint", a + "/checkpoint-3"});
  run(args(b, resumed));
  EXPECT_EQ(ct::fs::read_file(a + "/model.safetensors"), ct::fs::read_file(b + "/model.safetensors"));
  run(args(c, {"--max_steps", "6", "--pad_to_max_length", "false"}));
  EXPECT_NE(ct::fs::read_file(a + "/model.safetensors"), ct::fs::read_file(c + "/model.safetensors"));
  EXPECT_EQ(read_json(a + "/training_args.json")["group_by_length"], true);
  EXPECT_EQ(read_json(c + "/training_args.json")["group_by_length"], false);
}

// A stop signal seen before a step ends stops the run after that step with a complete checkpoint (even with
// --save_only_model), as every rank of a job would; an elastic restart with --overwrite_output_dir resumes it
// and ends with the weights of an uninterrupted run.
TEST_F(TrainerRun, StopSignalCheckpointsAndTheRestartResumesIt) {
  const std::string ref = root_ + "/stop_ref", out = root_ + "/stop_out";
  run(args(ref, {"--max_steps", "6", "--save_steps", "100"}));
  set_pending_stop_signal_for_test(SIGTERM);
  try {
    run(args(out, {"--max_steps", "6", "--save_steps", "100", "--save_only_model"}));
    ADD_FAILURE() << "no stop";
  } catch (const StopRequested& s) {
    EXPECT_EQ(s.step(), 1);
    EXPECT_EQ(s.exit_status(), 143);
    EXPECT_EQ(std::string(s.what()), "stopping at step 1 on SIGTERM: wrote " + out + "/checkpoint-1");
  }
  set_pending_stop_signal_for_test(0);
  for (const char* f : {"model.safetensors", "optimizer.safetensors", "scheduler.json", "trainer_state.json"})
    EXPECT_TRUE(stdfs::exists(out + "/checkpoint-1/" + f)) << f;
  EXPECT_FALSE(stdfs::exists(out + "/model.safetensors"));
  ::setenv("TORCHELASTIC_RESTART_COUNT", "1", 1);
  run(args(out, {"--max_steps", "6", "--save_steps", "100", "--overwrite_output_dir"}));
  ::unsetenv("TORCHELASTIC_RESTART_COUNT");
  EXPECT_EQ(ct::fs::read_file(ref + "/model.safetensors"), ct::fs::read_file(out + "/model.safetensors"));
  EXPECT_EQ(read_json(out + "/trainer_state.json")["global_step"], 6);
}

TEST_F(TrainerRun, OutputFolderHasHfFilesAndCheckpointsRotate) {
  const std::string o = root_ + "/outputs";
  auto r = run(args(o, {"--max_steps", "6", "--save_steps", "2", "--save_total_limit", "2", "--do_eval"}));
  for (const char* f :
       {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json",
        "training_args.json", "trainer_state.json", "train_results.json", "eval_results.json",
        "all_results.json", "eval_predictions.json", "eval_nbest_predictions.json"})
    EXPECT_TRUE(stdfs::exists(o + "/" + f)) << f;
  auto cks = list_checkpoints(o);
  ASSERT_EQ(cks.size(), 2u);
  EXPECT_EQ(cks[0].first, 4);
  EXPECT_EQ(cks[1].first, 6);
  for (const char* f : {"config.json", "model.safetensors", "optimizer.safetensors", "scheduler.json",
                        "rng_state.json", "trainer_state.json", "training_args.json", "vocab.txt"})
    EXPECT_TRUE(stdfs::exists(o + "/checkpoint-6/" + f)) << f;
  auto state = read_json(o + "/trainer_state.json");
  EXPECT_EQ(state["global_step"], 6);
  EXPECT_EQ(state["max_steps"], 6);
  const auto& h = state["log_history"];
  ASSERT_GE(h.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(h[i]["step"], i + 1);
    for (const char* k : {"loss", "grad_norm", "learning_rate", "epoch"}) EXPECT_TRUE(h[i].contains(k)) << k;
  }
  // warmup 2, total 6, linear: lr after step 1 = 3e-3 * 1/2, after step 2 = peak, after 6 = 0
  EXPECT_NEAR(h[0]["learning_rate"].get<double>(), 1.5e-3, 1e-12);
  EXPECT_NEAR(h[1]["learning_rate"].get<double>(), 3e-3, 1e-12);
  EXPECT_NEAR(h[5]["learning_rate"].get<double>(), 0.0, 1e-12);
  auto train = read_json(o + "/train_results.json");
  for (const char* k : {"train_loss", "train_runtime", "train_samples", "train_samples_per_second",
                        "train_steps_per_second", "epoch"})
    EXPECT_TRUE(train.contains(k)) << k;
  auto eval = read_json(o + "/eval_results.json");
  for (const char* k : {"eval_exact_match", "eval_f1", "eval_samples", "epoch"})
    EXPECT_TRUE(eval.contains(k)) << k;
  auto all = read_json(o + "/all_results.json");
  EXPECT_TRUE(all.contains("train_loss") && all.contains("eval_f1"));
  auto sched = read_json(o + "/checkpoint-6/scheduler.json");
  EXPECT_EQ(sched["last_epoch"], 6);
  auto cfg = ct::model::load_config(o + "/config.json");
  auto opt = load_optimizer_state(o + "/checkpoint-6/optimizer.safetensors",
                                  ct::model::make_param_layout(cfg).total);
  EXPECT_EQ(opt.step, 6);
}

TEST_F(TrainerRun, NonEmptyOutputDirWithoutCheckpointsIsRefusedAndUntouched) {
  const std::string o = root_ + "/used";
  stdfs::create_directories(o);
  ct::fs::write_file_atomic(o + "/notes.txt", "mine");
  try {
    run(args(o, {"--max_steps", "2"}));
    ADD_FAILURE() << "no error";
  } catch (const ct::Error& e) {
    EXPECT_NE(std::string(e.what()).find("--overwrite_output_dir"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::distance(stdfs::directory_iterator(o), stdfs::directory_iterator()), 1);
  run(args(o, {"--max_steps", "2", "--overwrite_output_dir"}));
  EXPECT_TRUE(stdfs::exists(o + "/model.safetensors"));
  EXPECT_EQ(ct::fs::read_file(o + "/notes.txt"), "mine");
}

TEST_F(TrainerRun, BadInputsNameTheirFlag) {
  auto expect_error = [](const std::vector<std::string>& a, const std::string& what) {
    try {
      run(a);
      ADD_FAILURE() << "no error for " << what;
    } catch (const ct::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error(args(root_ + "/bad1", {"--max_steps", "1", "--train_file", root_ + "/nope.json"}),
               "--train_file");
  expect_error(args(root_ + "/bad2", {"--max_steps", "1", "--config_name", root_ + "/nowhere"}),
               "--config_name");
  expect_error(args(root_ + "/bad3", {"--max_steps", "1", "--tokenizer_name", root_}), "--tokenizer_name");
  expect_error(args(root_ + "/bad4", {"--max_steps", "1", "--model_name_or_path", root_ + "/model"}),
               "--model_name_or_path");  // config and vocab but no weights
  expect_error(args(root_ + "/bad5", {"--max_steps", "1", "--max_seq_length", "200"}), "--max_seq_length");
  expect_error(args(root_ + "/bad6", {"--max_steps", "1", "--resume_from_checkpoint", root_ + "/none"}),
               "--resume_from_checkpoint");
}

}  // namespace

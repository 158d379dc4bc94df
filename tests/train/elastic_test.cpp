// The worker side of elastic training, in-process: the resume decision on a restart (every combination of
// restart variables, --overwrite_output_dir, --resume_from_checkpoint and output_dir contents), the
// environment parsing, the world-size change line, the per-step stop agreement over thread-ranks, and
// torchelastic's error file contents.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "../comm/comm_test_util.h"
#include "core/error.h"
#include "train/checkpoint.h"
#include "train/dist_context.h"
#include "train/error_file.h"
#include "train/trainer.h"

namespace stdfs = std::filesystem;
using namespace ct::train;

namespace {

class ElasticResume : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (stdfs::temp_directory_path() / ("ct_elastic_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    stdfs::remove_all(dir_);
    stdfs::create_directories(dir_);
  }
  void TearDown() override { stdfs::remove_all(dir_); }
  void make_checkpoint(int64_t step) {
    CheckpointWriter w(dir_, step);
    write_json(w.path(kTrainerStateFile), {{"global_step", step}});
    w.commit();
  }
  std::string name(const std::string& path) { return stdfs::path(path).filename().string(); }
  std::string dir_;
};

ElasticRestart restart(int64_t count, int64_t round = 0) {
  ElasticRestart r;
  r.restart_count = count;
  r.rdzv_round = round;
  r.under_agent = true;
  return r;
}

TEST_F(ElasticResume, DecisionTable) {
  const ElasticRestart first = restart(0), again = restart(1), round = restart(0, 2), none{};
  struct Row {
    const char* what;
    ElasticRestart r;
    bool overwrite;
    std::string resume_flag;
    bool do_train;
    std::string want;  // checkpoint folder name, "" for a fresh start, "error" for a refusal
    std::string why;   // a substring of the log line ("" for none)
  };
  // output_dir: missing.
  const std::string missing = dir_ + "/missing";
  for (const Row& row : {
           Row{"missing, first start", first, false, "", true, "", ""},
           Row{"missing, restart", again, false, "", true, "",
               "elastic restart (TORCHELASTIC_RESTART_COUNT=1): no complete checkpoint-N in"},
           Row{"missing, restart + overwrite", again, true, "", true, "", "training from scratch"},
           Row{"missing, rendezvous round 2", round, false, "", true, "",
               "elastic restart (CORETRAIN_RDZV_ROUND=2): no complete checkpoint-N"},
       }) {
    SCOPED_TRACE(row.what);
    auto d = decide_resume(missing, row.overwrite, row.resume_flag, row.do_train, row.r);
    EXPECT_EQ(d.checkpoint, row.want);
    if (row.why.empty())
      EXPECT_EQ(d.why, "");
    else
      EXPECT_NE(d.why.find(row.why), std::string::npos) << d.why;
  }
  // output_dir: non-empty, no checkpoint (only a temp folder of a killed save besides a file).
  std::ofstream(dir_ + "/notes.txt") << "x";
  stdfs::create_directories(dir_ + "/checkpoint-9.tmp-123");
  for (const Row& row : {
           Row{"used, first start", first, false, "", true, "error", ""},
           Row{"used, no agent", none, false, "", true, "error", ""},
           Row{"used, first start + overwrite", first, true, "", true, "", ""},
           Row{"used, restart", again, false, "", true, "", "no complete checkpoint-N in " + dir_ + " yet"},
           Row{"used, round", round, false, "", true, "", "training from scratch"},
           Row{"used, restart, eval only", again, false, "", false, "", ""},
           Row{"used, restart, resume true", again, true, "true", true, "error", ""},
       }) {
    SCOPED_TRACE(row.what);
    if (row.want == "error") {
      EXPECT_THROW(decide_resume(dir_, row.overwrite, row.resume_flag, row.do_train, row.r), ct::Error);
      continue;
    }
    auto d = decide_resume(dir_, row.overwrite, row.resume_flag, row.do_train, row.r);
    EXPECT_EQ(d.checkpoint, row.want);
    if (row.why.empty())
      EXPECT_EQ(d.why, "");
    else
      EXPECT_NE(d.why.find(row.why), std::string::npos) << d.why;
  }
  // output_dir: checkpoints 3 and 7 (and the temp folder, never taken).
  make_checkpoint(3);
  make_checkpoint(7);
  for (const Row& row : {
           Row{"ckpt, first start", first, false, "", true, "checkpoint-7", "Checkpoint detected"},
           Row{"ckpt, first start + overwrite (warns)", first, true, "", true, "", "still holds"},
           Row{"ckpt, no agent + overwrite", none, true, "", true, "", ""},
           Row{"ckpt, restart", again, false, "", true, "checkpoint-7",
               "elastic restart (TORCHELASTIC_RESTART_COUNT=1): resuming from the last complete checkpoint"},
           Row{"ckpt, restart + overwrite", again, true, "", true, "checkpoint-7",
               "--overwrite_output_dir applies to the job's first start only"},
           Row{"ckpt, round + overwrite", round, true, "", true, "checkpoint-7", "CORETRAIN_RDZV_ROUND=2"},
           Row{"ckpt, both + overwrite", restart(2, 3), true, "", true, "checkpoint-7",
               "(TORCHELASTIC_RESTART_COUNT=2, CORETRAIN_RDZV_ROUND=3)"},
           Row{"ckpt, restart, eval only", again, true, "", false, "", ""},
           Row{"ckpt, restart, explicit path wins", again, true, dir_ + "/checkpoint-3", true, "checkpoint-3",
               "as --resume_from_checkpoint says"},
           Row{"ckpt, restart, explicit true", again, true, "true", true, "checkpoint-7", ""},
           Row{"ckpt, restart, explicit false = automatic", again, true, "false", true, "checkpoint-7", ""},
           Row{"ckpt, restart, explicit bad path", again, true, dir_ + "/checkpoint-9.tmp-123", true, "error",
               ""},
       }) {
    SCOPED_TRACE(row.what);
    if (row.want == "error") {
      EXPECT_THROW(decide_resume(dir_, row.overwrite, row.resume_flag, row.do_train, row.r), ct::Error);
      continue;
    }
    auto d = decide_resume(dir_, row.overwrite, row.resume_flag, row.do_train, row.r);
    EXPECT_EQ(d.checkpoint.empty() ? "" : name(d.checkpoint), row.want);
    if (row.why.empty()) {
      if (!row.r.restarted()) {
        EXPECT_TRUE(d.why.empty() || d.why.find("Checkpoint") == 0) << d.why;
      }
    } else {
      EXPECT_NE(d.why.find(row.why), std::string::npos) << d.why;
    }
  }
  // The one warning: a first start under an agent that overwrites over old checkpoints.
  EXPECT_TRUE(decide_resume(dir_, true, "", true, first).warning);
  EXPECT_FALSE(decide_resume(dir_, true, "", true, again).warning);
}

TEST(ElasticEnv, ReadsBothVariables) {
  auto clear = [] {
    ::unsetenv("TORCHELASTIC_RESTART_COUNT");
    ::unsetenv("CORETRAIN_RDZV_ROUND");
  };
  clear();
  auto r = elastic_restart_from_env();
  EXPECT_FALSE(r.restarted());
  EXPECT_FALSE(r.under_agent);
  ::setenv("TORCHELASTIC_RESTART_COUNT", "0", 1);
  r = elastic_restart_from_env();
  EXPECT_FALSE(r.restarted());
  EXPECT_TRUE(r.under_agent);
  ::setenv("TORCHELASTIC_RESTART_COUNT", "3", 1);
  EXPECT_EQ(elastic_restart_from_env().restart_count, 3);
  EXPECT_TRUE(elastic_restart_from_env().restarted());
  ::setenv("TORCHELASTIC_RESTART_COUNT", "0", 1);
  ::setenv("CORETRAIN_RDZV_ROUND", "1", 1);
  r = elastic_restart_from_env();
  EXPECT_TRUE(r.restarted());
  EXPECT_EQ(r.describe(), "CORETRAIN_RDZV_ROUND=1");
  ::setenv("CORETRAIN_RDZV_ROUND", "-1", 1);
  try {
    elastic_restart_from_env();
    ADD_FAILURE() << "no error";
  } catch (const ct::Error& e) {
    EXPECT_NE(std::string(e.what()).find("CORETRAIN_RDZV_ROUND=-1"), std::string::npos) << e.what();
  }
  clear();
}

TEST(WorldChange, SaysWhatHappensToTheEpoch) {
  // 1000 features; 4 ranks x 12: 250 per rank, 21 steps per epoch; checkpoint-40 = epoch 1, 19 steps in,
  // samples 0-911 of the epoch's order done. 3 ranks x 12: 334 per rank, 28 steps per epoch; step 40 = epoch
  // 1, 12 steps in = sample 432: samples 432-911 come again.
  const std::string line =
      describe_world_change("out/checkpoint-40", 40, {4, 12, 1, 63}, {3, 12, 1, 84}, 1000,
                            /*drop_last=*/false);
  EXPECT_EQ(
      line.rfind("resuming checkpoint-40 written by 4 ranks with 3 ranks: global batch 48 -> 36 per step "
                 "(per_device_train_batch_size 12 x 3 x accumulation 1); the epoch's sample order is "
                 "re-dealt for 3 ranks",
                 0),
      0u)
      << line;
  EXPECT_NE(line.find("step 40 starts at sample 432 of epoch 1 in the 3-rank plan, but the 4-rank run had "
                      "reached sample 912, so samples 432-911 of the epoch's order are trained again"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("the epoch has 16 steps left (2 for 4 ranks) and the run ends at step 84 (was 63)"),
            std::string::npos)
      << line;
  // The same global batch (2 x 16 -> 1 x 32): the epoch continues where it stopped.
  const std::string same =
      describe_world_change("checkpoint-7", 7, {2, 16, 1, 80}, {1, 32, 1, 80}, 160, false);
  EXPECT_NE(same.find("global batch 32 -> 32"), std::string::npos) << same;
  EXPECT_NE(same.find("training continues at sample 64 of epoch 1, where the 2-rank run stopped"),
            std::string::npos)
      << same;
  // A larger global batch skips samples; accumulation counts.
  const std::string up = describe_world_change("checkpoint-5", 5, {1, 8, 2, 0}, {2, 8, 2, 0}, 1000, false);
  EXPECT_NE(up.find("global batch 16 -> 32"), std::string::npos) << up;
  EXPECT_NE(up.find("samples 80-159 of the epoch's order are skipped"), std::string::npos) << up;
  // Same world size (or an unknown writer): nothing to say.
  EXPECT_EQ(describe_world_change("checkpoint-5", 5, {2, 8, 1, 0}, {2, 4, 1, 0}, 100, false), "");
  EXPECT_EQ(describe_world_change("checkpoint-5", 5, {0, 8, 1, 0}, {2, 4, 1, 0}, 100, false), "");
}

TEST(StopAgreement, EveryRankGetsTheSameSignalAndTheLossMean) {
  struct Case {
    std::vector<int> signals;
    int want;
  };
  for (const Case& c : {Case{{0, 0, 0}, 0}, Case{{0, SIGTERM, 0}, SIGTERM}, Case{{SIGINT, 0, 0}, SIGINT},
                        Case{{SIGINT, 0, SIGTERM}, SIGTERM}}) {
    std::mutex mu;
    std::vector<StepAgreement> got(3);
    std::vector<double> plain(3);
    ct::comm::test::run_threads(3, 3, [&](ct::comm::Communicator& comm) {
      const auto d = dist_context(comm);
      const double v = 1.0 + 0.1 * d.rank;
      const auto a = agree_step(d, v, c.signals[static_cast<size_t>(d.rank)]);
      const double m = mean_over_ranks(d, v);
      std::lock_guard<std::mutex> lock(mu);
      got[static_cast<size_t>(d.rank)] = a;
      plain[static_cast<size_t>(d.rank)] = m;
    });
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(got[static_cast<size_t>(r)].stop_signal, c.want) << "rank " << r;
      EXPECT_EQ(got[static_cast<size_t>(r)].mean, plain[static_cast<size_t>(r)]) << "rank " << r;
    }
  }
  // One process: the value and its own signal.
  DistContext one;
  EXPECT_EQ(agree_step(one, 2.5, SIGINT).stop_signal, SIGINT);
  EXPECT_EQ(agree_step(one, 2.5, 0).mean, 2.5);
}

TEST(ErrorFile, TorchelasticFormat) {
  const auto j = nlohmann::json::parse(
      torchelastic_error_json("ct::Error", "--x: bad \xff", "coretrain qa: error: --x: bad\n", 1700000000));
  EXPECT_EQ(j["message"]["message"], "ct::Error: --x: bad \xef\xbf\xbd");
  EXPECT_EQ(j["message"]["extraInfo"]["py_callstack"], "coretrain qa: error: --x: bad\n");
  EXPECT_EQ(j["message"]["extraInfo"]["timestamp"], "1700000000");  // a string, as torch writes it
  const std::string path =
      (stdfs::temp_directory_path() / ("ct_errfile_" + std::to_string(::getpid()) + ".json")).string();
  ::unsetenv("TORCHELASTIC_ERROR_FILE");
  EXPECT_FALSE(write_torchelastic_error_file("ct::Error", "x", "y"));
  ::setenv("TORCHELASTIC_ERROR_FILE", path.c_str(), 1);
  EXPECT_TRUE(write_torchelastic_error_file("ct::Error", "x", "y"));
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(path))["message"]["message"], "ct::Error: x");
  ::setenv("TORCHELASTIC_ERROR_FILE", "/nonexistent-dir/e.json", 1);
  EXPECT_FALSE(write_torchelastic_error_file("ct::Error", "x", "y"));  // reported, never thrown
  ::unsetenv("TORCHELASTIC_ERROR_FILE");
  stdfs::remove(path);
}

}  // namespace

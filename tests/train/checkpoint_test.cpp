#include "train/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace stdfs = std::filesystem;
using namespace ct::train;

namespace {

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (stdfs::temp_directory_path() / ("ct_ckpt_" + std::to_string(::getpid()) + "_" +
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
  std::string dir_;
};

TEST_F(CheckpointTest, LastCheckpointIsHighestStepAndIgnoresTempAndOtherNames) {
  EXPECT_FALSE(get_last_checkpoint(dir_));
  make_checkpoint(3);
  make_checkpoint(10);
  make_checkpoint(9);
  stdfs::create_directories(dir_ + "/checkpoint-12.tmp-999");  // a killed run's half-written checkpoint
  stdfs::create_directories(dir_ + "/checkpoint-x");
  stdfs::create_directories(dir_ + "/checkpoint-13-old");
  std::ofstream(dir_ + "/checkpoint-20") << "a file, not a folder";
  auto last = get_last_checkpoint(dir_);
  ASSERT_TRUE(last);
  EXPECT_EQ(stdfs::path(*last).filename(), "checkpoint-10");
  EXPECT_EQ(list_checkpoints(dir_).size(), 3u);
  EXPECT_EQ(checkpoint_step(*last), 10);
  EXPECT_EQ(remove_stale_temp_checkpoints(dir_), 1);
  EXPECT_FALSE(stdfs::exists(dir_ + "/checkpoint-12.tmp-999"));
}

TEST_F(CheckpointTest, WriterLeavesNothingUnlessCommitted) {
  {
    CheckpointWriter w(dir_, 5);
    write_json(w.path("x.json"), {{"a", 1}});
    EXPECT_TRUE(stdfs::exists(w.temp_dir()));
    // destroyed without commit, as when a save throws midway
  }
  EXPECT_TRUE(stdfs::is_empty(dir_));
  make_checkpoint(5);
  EXPECT_TRUE(stdfs::exists(dir_ + "/checkpoint-5/trainer_state.json"));
  make_checkpoint(5);  // saving the same step again replaces it
  EXPECT_EQ(list_checkpoints(dir_).size(), 1u);
}

TEST_F(CheckpointTest, RotationKeepsNewestAndBest) {
  for (int s : {2, 4, 6, 8}) make_checkpoint(s);
  auto removed = rotate_checkpoints(dir_, 2);
  EXPECT_EQ(removed.size(), 2u);
  auto left = list_checkpoints(dir_);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].first, 6);
  EXPECT_EQ(left[1].first, 8);
  make_checkpoint(10);
  rotate_checkpoints(dir_, 1, dir_ + "/checkpoint-6");
  left = list_checkpoints(dir_);
  ASSERT_EQ(left.size(), 2u);  // best + newest, as HF
  EXPECT_EQ(left[0].first, 6);
  EXPECT_EQ(left[1].first, 10);
  EXPECT_TRUE(rotate_checkpoints(dir_, -1).empty());
}

TEST_F(CheckpointTest, OutputDirRules) {
  // missing or empty: fresh start
  EXPECT_EQ(decide_resume(dir_ + "/new", false, "", true), "");
  EXPECT_EQ(decide_resume(dir_, false, "", true), "");
  // non-empty without checkpoints: error naming the flag, unless overwriting or not training
  std::ofstream(dir_ + "/something.txt") << "x";
  try {
    decide_resume(dir_, false, "", true);
    ADD_FAILURE();
  } catch (const ct::Error& e) {
    EXPECT_NE(std::string(e.what()).find("--overwrite_output_dir"), std::string::npos);
  }
  EXPECT_EQ(decide_resume(dir_, true, "", true), "");
  EXPECT_EQ(decide_resume(dir_, false, "", false), "");
  // with checkpoints: resume from the latest unless overwriting
  make_checkpoint(3);
  make_checkpoint(7);
  EXPECT_EQ(stdfs::path(decide_resume(dir_, false, "", true)).filename(), "checkpoint-7");
  EXPECT_EQ(decide_resume(dir_, true, "", true), "");
  // explicit
  EXPECT_EQ(decide_resume(dir_, true, dir_ + "/checkpoint-3", true), dir_ + "/checkpoint-3");
  EXPECT_EQ(stdfs::path(decide_resume(dir_, true, "true", true)).filename(), "checkpoint-7");
  EXPECT_THROW(decide_resume(dir_, true, dir_ + "/checkpoint-99", true), ct::Error);
  stdfs::create_directories(dir_ + "/incomplete");
  EXPECT_THROW(decide_resume(dir_, true, dir_ + "/incomplete", true), ct::Error);
  EXPECT_THROW(decide_resume(dir_ + "/new", true, "true", true), ct::Error);
  // a file where the folder should be
  EXPECT_THROW(decide_resume(dir_ + "/something.txt", false, "", true), ct::Error);
}

TEST_F(CheckpointTest, OnlyTempLeftoversDoNotBlockAFreshStart) {
  stdfs::create_directories(dir_ + "/checkpoint-4.tmp-123");
  EXPECT_EQ(decide_resume(dir_, false, "", true), "");
}

TEST_F(CheckpointTest, OptimizerStateRoundTripAndChecks) {
  OptimizerState s;
  s.optim = "adamw_torch";
  s.step = 17;
  s.exp_avg = {1.f, -2.f, 3.5f};
  s.exp_avg_sq = {0.1f, 0.2f, 0.3f};
  save_optimizer_state(dir_ + "/opt.safetensors", s);
  auto r = load_optimizer_state(dir_ + "/opt.safetensors", 3);
  EXPECT_EQ(r.step, 17);
  EXPECT_EQ(r.optim, "adamw_torch");
  EXPECT_EQ(r.exp_avg, s.exp_avg);
  EXPECT_EQ(r.exp_avg_sq, s.exp_avg_sq);
  try {
    load_optimizer_state(dir_ + "/opt.safetensors", 4);
    ADD_FAILURE();
  } catch (const ct::Error& e) {
    EXPECT_NE(std::string(e.what()).find("opt.safetensors"), std::string::npos);
  }
  OptimizerState g;
  g.optim = "sgd";
  g.step = 2;
  g.exp_avg = {4.f, 5.f};
  save_optimizer_state(dir_ + "/sgd.safetensors", g);
  EXPECT_EQ(load_optimizer_state(dir_ + "/sgd.safetensors", 2).exp_avg, g.exp_avg);
  EXPECT_THROW(load_optimizer_state(dir_ + "/missing.safetensors", 2), ct::Error);
  std::ofstream(dir_ + "/junk.safetensors") << "not a safetensors file";
  EXPECT_THROW(load_optimizer_state(dir_ + "/junk.safetensors", 2), ct::Error);
}

}  // namespace

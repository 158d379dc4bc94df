// The command line every rank must share, as check_same_arguments compares it.
#include <gtest/gtest.h>

#include "train/run_setup.h"

namespace ct::train {
namespace {

TEST(RunSetup, CommandLineIsKeyedByFlagWithoutLocalRank) {
  const auto j = command_line_json({"--model_name_or_path", "m", "--do_train", "--seed=43", "--local_rank",
                                    "1", "--local-rank=0", "args.json", "--fp16", "--learning_rate", "-1"});
  EXPECT_EQ(j.value("model_name_or_path", ""), "m");
  EXPECT_EQ(j.value("do_train", ""), "true");
  EXPECT_EQ(j.value("seed", ""), "43");
  EXPECT_FALSE(j.contains("local_rank"));
  EXPECT_FALSE(j.contains("local-rank"));
  EXPECT_EQ(j.value("argv[7]", ""), "args.json");
  EXPECT_EQ(j.value("fp16", ""), "true");
  EXPECT_EQ(j.value("learning_rate", ""), "-1");
  // Two ranks whose only difference is their local rank agree.
  EXPECT_EQ(command_line_json({"--seed", "1", "--local_rank", "0"}),
            command_line_json({"--seed", "1", "--local_rank", "1"}));
  EXPECT_NE(command_line_json({"--seed", "1"}), command_line_json({"--seed", "2"}));
}

}  // namespace
}  // namespace ct::train

#include "train/lr_schedule.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

using namespace ct::train;

TEST(LrSchedule, LinearWithWarmupByHand) {
  LrSchedule s(ScheduleType::linear, 1.0, 2, 10);
  // warm-up: 0/2, 1/2; then (10 - s) / 8
  const double expect[] = {0.0,     0.5,     1.0,     7.0 / 8, 6.0 / 8, 5.0 / 8,
                           4.0 / 8, 3.0 / 8, 2.0 / 8, 1.0 / 8, 0.0,     0.0};
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(s.multiplier(i), expect[i], 1e-12) << i;
  LrSchedule no_warm(ScheduleType::linear, 3e-5, 0, 4);
  EXPECT_NEAR(no_warm.lr_at(0), 3e-5, 1e-18);
  EXPECT_NEAR(no_warm.lr_at(1), 2.25e-5, 1e-18);
  EXPECT_NEAR(no_warm.lr_at(4), 0.0, 1e-18);
}

TEST(LrSchedule, CosineConstantAndConstantWithWarmup) {
  LrSchedule c(ScheduleType::cosine, 2.0, 2, 6);
  EXPECT_NEAR(c.lr_at(1), 1.0, 1e-12);
  EXPECT_NEAR(c.lr_at(2), 2.0, 1e-12);
  EXPECT_NEAR(c.lr_at(4), 1.0, 1e-12);  // halfway: 0.5 * (1 + cos(pi/2))
  EXPECT_NEAR(c.lr_at(3), 2.0 * 0.5 * (1 + std::cos(3.14159265358979323846 * 0.25)), 1e-12);
  EXPECT_NEAR(c.lr_at(6), 0.0, 1e-12);
  LrSchedule k(ScheduleType::constant, 0.1, 5, 10);
  EXPECT_DOUBLE_EQ(k.lr_at(0), 0.1);
  LrSchedule kw(ScheduleType::constant_with_warmup, 1.0, 4, 10);
  EXPECT_DOUBLE_EQ(kw.lr_at(1), 0.25);
  EXPECT_DOUBLE_EQ(kw.lr_at(9), 1.0);
  EXPECT_THROW(parse_schedule_type("polynomial"), ct::Error);
}

TEST(LrSchedule, WarmupFromRatio) {
  EXPECT_EQ(warmup_steps_for(0, 0.1, 14754), 1476);  // ceil(1475.4)
  EXPECT_EQ(warmup_steps_for(7, 0.5, 100), 7);
  EXPECT_EQ(warmup_steps_for(0, 0.0, 100), 0);
}

TEST(StepPlan, SquadStepCountsPerWorldSize) {
  // reference: 88,524 features, batch 12/rank, 2 epochs.
  const int64_t world[] = {1, 2, 4, 8}, per_epoch[] = {7377, 3689, 1845, 923},
                total[] = {14754, 7378, 3690, 1846};
  for (int i = 0; i < 4; ++i) {
    auto p = plan_steps(88524, world[i], 12, 1, false, 2.0, -1);
    EXPECT_EQ(p.steps_per_epoch, per_epoch[i]);
    EXPECT_EQ(p.max_steps, total[i]);
    EXPECT_EQ(p.num_epochs, 2);
  }
}

TEST(StepPlan, AccumulationMaxStepsAndDropLast) {
  auto p = plan_steps(100, 1, 8, 4, false, 1.5, -1);  // 13 batches -> 4 updates per epoch
  EXPECT_EQ(p.batches_per_epoch, 13);
  EXPECT_EQ(p.steps_per_epoch, 4);
  EXPECT_EQ(p.max_steps, 6);
  EXPECT_EQ(p.num_epochs, 2);
  auto q = plan_steps(100, 1, 8, 1, true, 3.0, 30);
  EXPECT_EQ(q.batches_per_epoch, 12);
  EXPECT_EQ(q.max_steps, 30);
  EXPECT_EQ(q.num_epochs, 3);
  EXPECT_THROW(plan_steps(3, 1, 8, 1, true, 1.0, -1), ct::Error);
}

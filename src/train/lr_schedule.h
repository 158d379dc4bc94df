// Learning-rate schedules and step counting as the HF Trainer does them: the multiplier of the peak rate
// after `step` optimizer updates (transformers optimization.py formulas), warm-up from warmup_steps or
// ceil(total * warmup_ratio), and how many optimizer steps an epoch and a run have for a given world size.
#pragma once

#include <cstdint>
#include <string>

namespace ct::train {

enum class ScheduleType { linear, cosine, constant, constant_with_warmup };

ScheduleType parse_schedule_type(const std::string& name);  // throws naming --lr_scheduler_type

class LrSchedule {
 public:
  LrSchedule(ScheduleType type, double peak_lr, int64_t warmup_steps, int64_t total_steps);
  // HF LambdaLR: the rate used by update number `step` + 1 (0-based step = updates done so far); also what
  // the Trainer logs as learning_rate after `step` updates.
  double lr_at(int64_t step) const;
  double multiplier(int64_t step) const;
  int64_t warmup_steps() const { return warmup_; }
  int64_t total_steps() const { return total_; }
  ScheduleType type() const { return type_; }

 private:
  ScheduleType type_;
  double peak_;
  int64_t warmup_;
  int64_t total_;
};

// HF get_warmup_steps: warmup_steps when > 0, else ceil(total * warmup_ratio).
int64_t warmup_steps_for(int64_t warmup_steps, double warmup_ratio, int64_t total_steps);

struct StepPlan {
  int64_t batches_per_epoch = 0;  // micro-batches one rank sees per epoch
  int64_t steps_per_epoch = 0;  // optimizer updates per epoch (a trailing partial accumulation still updates)
  int64_t max_steps = 0;        // total optimizer updates of the run
  int64_t num_epochs = 0;       // epochs the loop will start (ceil)
};

// num_features over `world` ranks (DistributedSampler pads to a multiple of world), `batch` per rank, `accum`
// micro-batches per update; max_steps > 0 overrides epochs as in HF.
StepPlan plan_steps(int64_t num_features, int64_t world, int64_t batch, int64_t accum, bool drop_last,
                    double num_train_epochs, int64_t max_steps);

}  // namespace ct::train

#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace ct::train {

ScheduleType parse_schedule_type(const std::string& name) {
  if (name == "linear") return ScheduleType::linear;
  if (name == "cosine") return ScheduleType::cosine;
  if (name == "constant") return ScheduleType::constant;
  if (name == "constant_with_warmup") return ScheduleType::constant_with_warmup;
  fail("--lr_scheduler_type: expected linear|cosine|constant|constant_with_warmup, got '", name, "'");
}

LrSchedule::LrSchedule(ScheduleType type, double peak_lr, int64_t warmup_steps, int64_t total_steps)
    : type_(type), peak_(peak_lr), warmup_(warmup_steps), total_(total_steps) {}

double LrSchedule::multiplier(int64_t step) const {
  const double s = static_cast<double>(step), w = static_cast<double>(warmup_),
               n = static_cast<double>(total_);
  switch (type_) {
    case ScheduleType::constant:
      return 1.0;
    case ScheduleType::constant_with_warmup:
      return step < warmup_ ? s / std::max(1.0, w) : 1.0;
    case ScheduleType::linear:
      if (step < warmup_) return s / std::max(1.0, w);
      return std::max(0.0, (n - s) / std::max(1.0, n - w));
    case ScheduleType::cosine: {
      if (step < warmup_) return s / std::max(1.0, w);
      const double progress = (s - w) / std::max(1.0, n - w);
      constexpr double kCycles = 0.5, kPi = 3.14159265358979323846;
      return std::max(0.0, 0.5 * (1.0 + std::cos(kPi * kCycles * 2.0 * progress)));
    }
  }
  return 1.0;
}

double LrSchedule::lr_at(int64_t step) const {
  return peak_ * multiplier(step);
}

int64_t warmup_steps_for(int64_t warmup_steps, double warmup_ratio, int64_t total_steps) {
  if (warmup_steps > 0) return warmup_steps;
  return static_cast<int64_t>(std::ceil(static_cast<double>(total_steps) * warmup_ratio));
}

StepPlan plan_steps(int64_t num_features, int64_t world, int64_t batch, int64_t accum, bool drop_last,
                    double num_train_epochs, int64_t max_steps) {
  CT_ASSERT(world > 0 && batch > 0 && accum > 0 && num_features >= 0);
  StepPlan p;
  const int64_t per_rank = (num_features + world - 1) / world;
  p.batches_per_epoch = drop_last ? per_rank / batch : (per_rank + batch - 1) / batch;
  if (p.batches_per_epoch == 0)
    fail("no training batches: ", num_features, " features over ", world, " ranks with batch ", batch,
         drop_last ? " and --dataloader_drop_last" : "");
  p.steps_per_epoch = (p.batches_per_epoch + accum - 1) / accum;
  if (max_steps > 0) {
    p.max_steps = max_steps;
    p.num_epochs = (max_steps + p.steps_per_epoch - 1) / p.steps_per_epoch;
  } else {
    p.max_steps = static_cast<int64_t>(std::ceil(num_train_epochs * static_cast<double>(p.steps_per_epoch)));
    p.num_epochs = static_cast<int64_t>(std::ceil(num_train_epochs));
  }
  return p;
}

}  // namespace ct::train

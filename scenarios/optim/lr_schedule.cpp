// lr_schedule.cpp — see lr_schedule.h.
#include "scenarios/optim/lr_schedule.h"

#include <fmt/format.h>

#include <cmath>

namespace ddpbench::scenarios {

namespace {

// OneCycleLR._annealing_cos.
double annealing_cos(double start, double end, double pct) {
  const double cos_out = std::cos(M_PI * pct) + 1;
  return end + (start - end) / 2.0 * cos_out;
}

ScheduledStep one_cycle(const ScheduleSpec& s, double base_lr, int64_t step) {
  const double initial_lr = base_lr / kOneCycleDivFactor;
  const double min_lr = initial_lr / kOneCycleFinalDivFactor;
  const double first_end = s.pct_start * static_cast<double>(s.total_steps) - 1;
  const auto last_end = static_cast<double>(s.total_steps - 1);
  const auto step_num = static_cast<double>(step);
  if (step_num <= first_end) {
    const double pct = (step_num - 0) / (first_end - 0);
    return {annealing_cos(initial_lr, base_lr, pct),
            annealing_cos(kOneCycleMaxMomentum, kOneCycleBaseMomentum, pct)};
  }
  const double pct = (step_num - first_end) / (last_end - first_end);
  return {annealing_cos(base_lr, min_lr, pct),
          annealing_cos(kOneCycleBaseMomentum, kOneCycleMaxMomentum, pct)};
}

}  // namespace

ScheduledStep scheduled_step(const ScheduleSpec& s, double base_lr, int64_t step) {
  if (s.kind == ScheduleKind::kOneCycle) return one_cycle(s, base_lr, step);
  return {scheduled_lr(s, base_lr, step), std::nullopt};
}

double scheduled_lr(const ScheduleSpec& s, double base_lr, int64_t step) {
  switch (s.kind) {
    case ScheduleKind::kOneCycle:
      return one_cycle(s, base_lr, step).lr;
    case ScheduleKind::kConstant:
      return base_lr;
    case ScheduleKind::kStep: {
      // StepLR.get_lr multiplies the group's current rate at each boundary; a closed form
      // base * gamma**(step // step_size) differs from it in the last bits.
      double lr = base_lr;
      for (int64_t k = s.step_size; k <= step; k += s.step_size) lr *= s.gamma;
      return lr;
    }
    case ScheduleKind::kWarmupCosine: {
      // Python evaluates left to right in double: the same operations in the same order give
      // the same bits (math.cos and std::cos are both the C library's cos).
      if (step < s.warmup_steps) {
        return base_lr * static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps + 1);
      }
      if (step > s.decay_steps) return s.min_lr;
      const double decay_ratio = static_cast<double>(step - s.warmup_steps) /
                                 static_cast<double>(s.decay_steps - s.warmup_steps);
      const double coeff = 0.5 * (1.0 + std::cos(M_PI * decay_ratio));
      return s.min_lr + coeff * (base_lr - s.min_lr);
    }
  }
  return base_lr;
}

double group_lr(const ScheduleSpec& s, double base_lr, double scale, int64_t step) {
  if (scale == 1.0) return scheduled_lr(s, base_lr, step);
  if (s.kind == ScheduleKind::kWarmupCosine) return scheduled_lr(s, base_lr, step) * scale;
  return scheduled_lr(s, base_lr * scale, step);
}

std::string describe_schedule(const ScheduleSpec& s) {
  switch (s.kind) {
    case ScheduleKind::kConstant:
      return "";
    case ScheduleKind::kStep:
      return fmt::format("StepLR(step_size={}, gamma={})", s.step_size, s.gamma);
    case ScheduleKind::kWarmupCosine:
      return fmt::format("warmup {} steps + cosine to min_lr={} at step {}", s.warmup_steps,
                         s.min_lr, s.decay_steps);
    case ScheduleKind::kOneCycle:
      return fmt::format("OneCycleLR(total_steps={}, pct_start={})", s.total_steps, s.pct_start);
  }
  return "";
}

}  // namespace ddpbench::scenarios

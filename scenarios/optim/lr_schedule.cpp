// lr_schedule.cpp — see lr_schedule.h.
#include "scenarios/optim/lr_schedule.h"

#include <fmt/format.h>

#include <cmath>

namespace ddpbench::scenarios {

double scheduled_lr(const ScheduleSpec& s, double base_lr, int64_t step) {
  switch (s.kind) {
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

std::string describe_schedule(const ScheduleSpec& s) {
  switch (s.kind) {
    case ScheduleKind::kConstant:
      return "";
    case ScheduleKind::kStep:
      return fmt::format("StepLR(step_size={}, gamma={})", s.step_size, s.gamma);
    case ScheduleKind::kWarmupCosine:
      return fmt::format("warmup {} steps + cosine to min_lr={} at step {}", s.warmup_steps,
                         s.min_lr, s.decay_steps);
  }
  return "";
}

}  // namespace ddpbench::scenarios

// lr_schedule.h — the learning rate of each optimizer step (SCHED.* keys): constant, StepLR, or
// nanoGPT's linear warmup then cosine decay to a floor. A pure function of the run-global
// optimizer step, so a resumed run (--resume) continues the schedule from its checkpoint's step
// with nothing more stored, every rank and mode computes the same rate, and the Python oracles
// compute it the same way (reference/torch_ddp_oracle_rank.py). Micro-steps of gradient
// accumulation share their optimizer step's rate. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "scenarios/choice_names.h"

namespace ddpbench::scenarios {

struct ScheduleSpec {
  ScheduleKind kind = ScheduleKind::kConstant;
  // step: the rate is multiplied by `gamma` every `step_size` optimizer steps.
  int64_t step_size = 1;
  double gamma = 0.1;
  // warmup_cosine: nanoGPT's warmup_iters, lr_decay_iters and min_lr.
  int64_t warmup_steps = 0;
  int64_t decay_steps = 1;
  double min_lr = 0.0;
  // onecycle: OneCycleLR(max_lr=base_lr, total_steps, pct_start), its other arguments torch's
  // defaults (kOneCycle* below).
  int64_t total_steps = 1;
  double pct_start = 0.3;
};

// torch.optim.lr_scheduler.OneCycleLR's defaults: div_factor, final_div_factor, base_momentum,
// max_momentum (anneal_strategy 'cos', three_phase False, cycle_momentum True).
inline constexpr double kOneCycleDivFactor = 25.0;
inline constexpr double kOneCycleFinalDivFactor = 1e4;
inline constexpr double kOneCycleBaseMomentum = 0.85;
inline constexpr double kOneCycleMaxMomentum = 0.95;

// What a schedule sets before optimizer step `step`: every group's rate, and for OneCycle the
// momentum (Adam's and AdamW's betas[0], SGD's momentum), as OneCycleLR sets both.
struct ScheduledStep {
  double lr = 0.0;
  std::optional<double> momentum;
};

// The rate optimizer step `step` (0-based, run-global) uses, from the base rate `base_lr`.
//   constant:      base_lr.
//   step:          StepLR as torch.optim.lr_scheduler.StepLR computes it, chained: the previous
//                  rate times gamma at every multiple of step_size (the same rounding as Python,
//                  where base * gamma**k would round differently).
//   warmup_cosine: nanoGPT's get_lr(it), operation for operation in double:
//                  it < warmup: base * (it + 1) / (warmup + 1); it > decay: min_lr; else
//                  min_lr + 0.5 * (1 + cos(pi * (it - warmup) / (decay - warmup))) * (base -
//                  min_lr).
//   onecycle:      OneCycleLR.get_lr at last_epoch = step, operation for operation: two phases
//                  ending at float(pct_start * total_steps) - 1 and total_steps - 1, each
//                  annealed by cos from initial_lr = base / 25 to base, then to initial_lr / 1e4;
//                  the momentum from 0.95 to 0.85 and back.
double scheduled_lr(const ScheduleSpec& schedule, double base_lr, int64_t step);
ScheduledStep scheduled_step(const ScheduleSpec& schedule, double base_lr, int64_t step);

// The rate at step `step` of a parameter group whose share of the base rate is `scale`
// (OPTIM.NO_DECAY_LR_SCALE; 1 for the decaying group): its own base, base_lr x scale, run through
// the schedule, as torch's schedulers run each group's initial lr (StepLR; OneCycleLR given a
// max_lr per group); for warmup_cosine, whose get_lr(it) is a rate (SCHED.MIN_LR is one),
// get_lr(it) x scale, as a loop writing g['lr'] = lr * g['lr_scale'] sets it. Scale 1 is
// scheduled_lr exactly.
double group_lr(const ScheduleSpec& schedule, double base_lr, double scale, int64_t step);

// "StepLR(step_size=3, gamma=0.5)", "warmup 2 + cosine to 1e-05 at step 10", "" for constant:
// what the report's optimizer line adds.
std::string describe_schedule(const ScheduleSpec& schedule);

}  // namespace ddpbench::scenarios

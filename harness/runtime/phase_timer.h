// phase_timer.h — times the phases of one training step. The step loop says where each phase
// ends; untimed work between phases (progress reports, gradient records) is left out by calling
// resume() after it. Which timer a process gets is the execution context's choice, by device
// (as c10d's reducer picks a CPU or CUDA timer): the host clock for the CPU; CUDA events for a
// CUDA device (cuda_services.h), since on an asynchronous device the host clock would time kernel
// launches, not kernels — that timer records events where a phase ends and reads them at the step
// boundary.
#pragma once

#include <memory>

#include "metrics/step_statistics.h"

namespace ddpbench::runtime {

enum class Phase { kData, kForward, kBackward, kCommWait, kOptimizer };

class PhaseTimer {
 public:
  virtual ~PhaseTimer() = default;
  // Starts a timed stretch: at the start of a step, and after untimed work inside one.
  virtual void resume() = 0;
  // Ends the current stretch and adds its duration to `phase`.
  virtual void stop(Phase phase) = 0;
  // Completes the step: the phase times gathered since the previous finish_step(), with total
  // the sum of the phases (untimed work is in no phase and so not in the total).
  virtual metrics::PhaseTimes finish_step() = 0;
};

// The field of `times` that `phase` adds to.
double& phase_slot(metrics::PhaseTimes& times, Phase phase);

// The host steady clock.
std::unique_ptr<PhaseTimer> make_host_phase_timer();

}  // namespace ddpbench::runtime

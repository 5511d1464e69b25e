// lockstep.h — the lockstep comparison. The judged mode's exact reference trains on its own; before
// every step of the judged mode, its model and optimizer get the reference's state at that step
// (parameters, buffers, optimizer state), so every step's loss, gradients and update are compared
// from the same state and rounding cannot compound over steps — float32 can be judged over as many
// steps as a user runs. After each step the judged mode's update (parameters after minus before)
// and buffers are compared with the reference's after the same step. For DDP every rank builds a
// driver: rank 0 trains the reference and broadcasts its parameters and optimizer state; buffers
// reach the other ranks only through DDP's own broadcast before the forward, which is thereby
// checked.
#pragma once

#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "compare/mode_comparison.h"
#include "modes/common/mode_kind.h"
#include "training/phase_inputs.h"
#include "training/stepped_reference.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace ddpbench::training {

// Lockstep's updates check, per parameter of `got`: its update against `reference`'s, both from
// `start` (the parameters before the step), as compare::normalized_update_error with the step's
// largest reference update as the rounding level and the elements whose reference gradient was
// at rounding level left out (Note [Gradients at rounding level]); `limit` is the check's. With
// `reference_optimizer` (the optimizer that stepped `reference`), an adaptive optimizer's elements
// get the room their gradients' rounding gives (Note [Updates of adaptive optimizers]). Shared
// with the rounding floor's twin (training/floor_measurement.h), so both are measured alike.
std::vector<double> update_errors(const torch::nn::Module& got, const torch::nn::Module& reference,
                                  const std::vector<at::Tensor>& start, double limit,
                                  torch::optim::Optimizer* reference_optimizer = nullptr);

class LockstepDriver {
 public:
  // `judged` is the judged mode's model (its structure picks the exact reference); `comm` is null
  // when the judged mode runs in this process (dp), else DDP's communicator (collective).
  LockstepDriver(const PhaseInputs& in, modes::ModeKind mode, const torch::nn::Module& judged,
                 comm::Communicator* comm);
  ~LockstepDriver();

  // TrainOptions::before_step: records the judged state after step-1, loads the reference's state
  // at `step`, and advances the reference through `step`.
  void before_step(int64_t step, torch::nn::Module& module, torch::optim::Optimizer& optimizer);
  // TrainOptions::after_step (every rank; collective where the mode's checks are): what is
  // judged after the step rather than from the next step's start (zero: the optimizer state).
  void after_step(int64_t step, const torch::nn::Module& module,
                  torch::optim::Optimizer& optimizer);
  // After the last step: every per-step difference (empty on ranks other than 0).
  std::vector<compare::StateDiff> finish(const torch::nn::Module& module);

 private:
  void record(int64_t step, const torch::nn::Module& module);
  // Zero: the optimizer's state after `step` against the reference's, for every parameter each
  // rank's optimizer holds (stages 1 and 2: the ones it owns; stage 3: all, gathered from the
  // shards), so every shard of the state is judged against the reference's slice. The updates
  // cannot see a wrong state once the step is taken: the next step starts from the reference's.
  // The worst rank's error per entry goes to rank 0.
  void check_optimizer_state(int64_t step, const torch::nn::Module& module,
                             torch::optim::Optimizer& optimizer);

  const PhaseInputs& in_;
  modes::ModeKind mode_;
  comm::Communicator* comm_;
  compare::Tolerance tolerance_;
  double gradient_limit_ = 0.0;  // the updates check's limit (Note [Gradients at rounding level])
  std::unique_ptr<SteppedReference> reference_;  // null on DDP ranks other than 0
  std::vector<at::Tensor> start_parameters_;     // the state both started the current step from
  int64_t steps_done_ = 0;
  std::vector<compare::StateDiff> diffs_;
};

}  // namespace ddpbench::training

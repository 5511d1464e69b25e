// float32_shadow.h — what --amp changes in a mode's steps, measured. Before each checked step the
// mode's state (parameters, buffers, optimizer state) is copied into a float32 model that takes
// the same step without autocast: the mode's exact reference with --amp off (plain single-device
// training for single), which is what the mode itself computes in float32, to float32 rounding
// (every float32 run judges exactly that). After the step, the mode's update (parameters after
// minus before) is compared with the float32 update, as a fraction of the step's largest float32
// update, and its loss with the float32 loss. A figure for the report, never a verdict: the checks
// judge the mode against a reference that autocasts as it does (Note [Mixed precision judged
// against its own reference] in docs/ARCHITECTURE.md). Steps the GradScaler skipped are left out:
// they have no update to compare. Under DDP rank 0 measures (every rank holds its state after DDP's
// broadcast and averaged gradients).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "modes/common/mode_kind.h"
#include "reports/run/run_record.h"
#include "training/phase_inputs.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}
namespace ddpbench::modes {
struct TrainResult;
}

namespace ddpbench::training {

class SteppedReference;

class Float32Shadow {
 public:
  // `judged` is the mode's model (its structure picks the exact reference, as for lockstep).
  Float32Shadow(const PhaseInputs& in, modes::ModeKind mode, const torch::nn::Module& judged);
  ~Float32Shadow();
  // The float32 model's step reports its loss into this object.
  Float32Shadow(const Float32Shadow&) = delete;
  Float32Shadow& operator=(const Float32Shadow&) = delete;

  // TrainOptions::before_step, after anything else that sets the step's starting state
  // (lockstep): the float32 step from the mode's state.
  void before_step(int64_t step, torch::nn::Module& module, torch::optim::Optimizer& optimizer);
  // TrainOptions::after_step: the mode's update against the float32 one.
  void after_step(int64_t step, const torch::nn::Module& module);
  // The largest differences over the steps, with the mode's recorded losses (the global mean
  // under DDP) and skipped steps from `result`; `amp` names the autocast dtype in the summary.
  reports::AmpErrorRecord finish(const modes::TrainResult& result, const std::string& amp) const;

 private:
  struct StepError {
    int64_t step = 0;
    double update_error = 0;
    std::string tensor;
    double float32_loss = 0;
  };

  std::unique_ptr<SteppedReference> model_;
  std::vector<at::Tensor> start_;  // the mode's parameters before the current step (host)
  double float32_loss_ = 0;        // the float32 step's loss, from its on_step
  std::vector<StepError> steps_;
};

}  // namespace ddpbench::training

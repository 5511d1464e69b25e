// training_state.h — everything a training step starts from: parameters, buffers and the
// optimizer's per-parameter state (SGD's momentum buffers). The lockstep comparison copies it from
// the reference into the judged mode before every step, so each step is compared from the same
// state and rounding cannot compound.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace ddpbench::modes {

struct TrainingState {
  std::vector<at::Tensor> parameters;  // registration order
  std::vector<at::Tensor> buffers;     // registration order
  // One per parameter once the optimizer has stepped with momentum; empty before. An entry is
  // undefined for a parameter that has none yet: SGD skips a None gradient, so a parameter no
  // step has given a gradient (a branch unused so far) has no momentum buffer while others do.
  std::vector<at::Tensor> momentum;
};

// Detached copies. The optimizer must be the scenarios' SGD (training_recipe.h).
TrainingState capture_training_state(const torch::nn::Module& module,
                                     torch::optim::Optimizer& optimizer);

// Copies `state` into the module's tensors in place (they keep their identity, so a DDP reducer's
// hooks stay valid) and sets the optimizer's momentum buffers (or clears them).
void load_training_state(torch::nn::Module& module, torch::optim::Optimizer& optimizer,
                         const TrainingState& state);

}  // namespace ddpbench::modes

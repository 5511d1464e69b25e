// training_state.h — everything a training step starts from: parameters, buffers and the
// optimizer's per-parameter state (SGD's momentum buffers, Adam's step and moments). The lockstep
// comparison copies it from the reference into the judged mode before every step, so each step is
// compared from the same state and rounding cannot compound.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <optional>
#include <string>
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
  // Per parameter, the optimizer's state tensors by PyTorch's names ("momentum_buffer"; Adam:
  // "step" (a scalar tensor), "exp_avg", "exp_avg_sq"); empty maps before the first step
  // (scenarios/optim/optimizer_state.h).
  std::vector<std::map<std::string, at::Tensor>> optimizer_state;
  // --amp fp16: the GradScaler's scale and growth tracker, as torch.amp.GradScaler.state_dict()
  // holds them ("scale", "_growth_tracker"). Only checkpoints carry it: lockstep copies the
  // reference's model and optimizer, never its scaler (each scale is judged on its own).
  struct GradScalerState {
    double scale = 0;
    int64_t growth_tracker = 0;
  };
  std::optional<GradScalerState> grad_scaler;
};

// Detached host copies. The optimizer must be one make_optimizer builds (training_recipe.h).
TrainingState capture_training_state(const torch::nn::Module& module,
                                     torch::optim::Optimizer& optimizer);

// Copies `state` into the module's tensors in place (they keep their identity, so a DDP reducer's
// hooks stay valid) and sets the optimizer's state of every parameter it holds (an empty map
// clears it; no optimizer_state at all clears every parameter's): all of them, but for a zero
// rank's optimizer, which holds only the parameters the rank owns.
void load_training_state(torch::nn::Module& module, torch::optim::Optimizer& optimizer,
                         const TrainingState& state);

}  // namespace ddpbench::modes

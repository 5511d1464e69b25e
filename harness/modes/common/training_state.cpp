// training_state.cpp — see training_state.h.
#include "modes/common/training_state.h"

#include <torch/torch.h>

#include <set>

#include "modes/common/model_state.h"
#include "scenarios/optim/optimizer_state.h"

namespace ddpbench::modes {

TrainingState capture_training_state(const torch::nn::Module& module,
                                     torch::optim::Optimizer& optimizer) {
  TrainingState s;
  for (const auto& p : module.parameters()) s.parameters.push_back(host_copy(p));
  for (const auto& b : module.buffers()) s.buffers.push_back(host_copy(b));
  for (const auto& p : module.parameters()) {
    std::map<std::string, at::Tensor> copies;
    for (const auto& [name, t] : scenarios::parameter_state(optimizer, p)) {
      copies.emplace(name, host_copy(t));
    }
    s.optimizer_state.push_back(std::move(copies));
  }
  return s;
}

void load_training_state(torch::nn::Module& module, torch::optim::Optimizer& optimizer,
                         const TrainingState& s) {
  torch::NoGradGuard no_grad;
  auto params = module.parameters();
  auto buffers = module.buffers();
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(s.parameters[i]);
  for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(s.buffers[i]);
  // A zero rank's optimizer holds only the parameters it owns: it gets only their state.
  std::set<const void*> held;
  for (const auto& group : optimizer.param_groups()) {
    for (const at::Tensor& p : group.params()) held.insert(p.unsafeGetTensorImpl());
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (held.count(params[i].unsafeGetTensorImpl()) == 0) continue;
    std::map<std::string, at::Tensor> placed;
    if (i < s.optimizer_state.size()) {
      for (const auto& [name, t] : s.optimizer_state[i]) {
        // On the parameter's device, as the optimizer's own state would be (libtorch's Adam
        // reads "step" back as a number).
        placed.emplace(name, t.to(params[i].device(), /*non_blocking=*/false, /*copy=*/true));
      }
    }
    scenarios::set_parameter_state(optimizer, params[i], placed);
  }
}

}  // namespace ddpbench::modes

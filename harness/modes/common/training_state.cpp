// training_state.cpp — see training_state.h.
#include "modes/common/training_state.h"

#include <torch/torch.h>

#include <stdexcept>

#include "modes/common/model_state.h"
#include "scenarios/optim/multi_tensor_sgd.h"

namespace ddpbench::modes {
namespace {

scenarios::MultiTensorSGD& as_sgd(torch::optim::Optimizer& optimizer) {
  auto* sgd = dynamic_cast<scenarios::MultiTensorSGD*>(&optimizer);
  if (sgd == nullptr)
    throw std::logic_error("training state: only the scenarios' SGD is supported");
  return *sgd;
}

}  // namespace

TrainingState capture_training_state(const torch::nn::Module& module,
                                     torch::optim::Optimizer& optimizer) {
  TrainingState s;
  for (const auto& p : module.parameters()) s.parameters.push_back(host_copy(p));
  for (const auto& b : module.buffers()) s.buffers.push_back(host_copy(b));
  auto& sgd = as_sgd(optimizer);
  bool any = false;
  for (const auto& p : module.parameters()) {
    const at::Tensor buffer = sgd.momentum_buffer(p);
    any = any || buffer.defined();
    s.momentum.push_back(buffer.defined() ? host_copy(buffer) : at::Tensor());
  }
  if (!any) s.momentum.clear();  // no momentum yet (before the first step, or momentum 0)
  return s;
}

void load_training_state(torch::nn::Module& module, torch::optim::Optimizer& optimizer,
                         const TrainingState& s) {
  torch::NoGradGuard no_grad;
  auto params = module.parameters();
  auto buffers = module.buffers();
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(s.parameters[i]);
  for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(s.buffers[i]);
  auto& sgd = as_sgd(optimizer);
  for (size_t i = 0; i < params.size(); ++i) {
    // On the parameter's device, as the optimizer's own buffer would be.
    const bool has = !s.momentum.empty() && s.momentum[i].defined();
    sgd.set_momentum_buffer(params[i], has ? s.momentum[i].to(params[i].device(),
                                                              /*non_blocking=*/false,
                                                              /*copy=*/true)
                                           : at::Tensor());
  }
}

}  // namespace ddpbench::modes

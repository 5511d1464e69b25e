// gradient_path.cpp — see gradient_path.h: the defaults every mode but zero keeps.
#include "modes/common/gradient_path.h"

#include <torch/torch.h>

#include <stdexcept>

#include "modes/common/trained_parameters.h"
#include "scenarios/optim/clip_grad_norm.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes {

// A path that does not evaluate (a test's stand-in) says so instead of running something else.
at::Tensor GradientPath::eval_forward(const at::Tensor& /*inputs*/) {
  throw std::logic_error(who() + " has no evaluation forward");
}

std::unique_ptr<torch::optim::Optimizer> GradientPath::make_optimizer(
    const scenarios::OptimizerSpec& spec) {
  std::vector<at::Tensor> parameters = module().parameters();
  std::vector<std::string> names = parameter_names(module(), parameters);
  return scenarios::make_optimizer(spec, std::move(parameters), names);
}

void GradientPath::clip_gradients(double max_norm) {
  scenarios::clip_grad_norm(module().parameters(), max_norm);
}

void GradientPath::step_optimizer(torch::optim::Optimizer& optimizer) { optimizer.step(); }

std::vector<at::Tensor> GradientPath::gradients_to_record() {
  std::vector<at::Tensor> grads;
  for (const at::Tensor& p : module().parameters()) grads.push_back(p.grad());
  return grads;
}

}  // namespace ddpbench::modes

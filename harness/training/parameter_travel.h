// parameter_travel.h — how far a free-running reference's parameters travelled: per parameter,
// elementwise max(|initial value|, sum over the checked steps of |update|), measured around each
// step from the step loop's hooks. A final parameter's rounding scales with it, and the
// comparison holds the modes' final parameters to it (Note [Parameters judged by what moved
// them], compare/mode_comparison.h).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace torch::nn {
class Module;
}

namespace ddpbench::training {

class ParameterTravel {
 public:
  // TrainOptions::before_step and after_step of the reference's check phase.
  void before_step(const torch::nn::Module& module);
  void after_step(const torch::nn::Module& module);
  // Per parameter (the module's order), host float64; empty when no step ran.
  std::vector<at::Tensor> finish() const;

 private:
  std::vector<at::Tensor> before_;   // the parameters before the current step
  std::vector<at::Tensor> initial_;  // |parameters| before the first step
  std::vector<at::Tensor> moved_;    // sum of |update| so far
};

}  // namespace ddpbench::training

// multi_tensor_sgd.h — SGD whose step updates all parameters with multi-tensor (`_foreach_*`)
// kernels, as Python's torch.optim.SGD does by default on CUDA (foreach=True): one kernel launch
// per operation for the whole parameter list instead of one per parameter, which is what makes
// an optimizer step cheap on a GPU (issue 10). The arithmetic is libtorch's SGD, operation for
// operation, so results match torch::optim::SGD bitwise on CPU (tests/unit/scenarios_multi_tensor_
// sgd_test.cpp), and the momentum buffers live in the same state map under the same keys, so code
// that reads SGD's state (modes/common/training_state.cpp) works with either.
// On the CPU, where _foreach is a per-tensor loop anyway, the step runs the same kernels per
// tensor writing into scratch tensors kept between steps: the two temporaries of every step
// (gradient + weight decay, nesterov's look-ahead; 2 x 44.7 MB on ResNet-18) are not allocated,
// page-faulted and freed again each step.
#pragma once

#include <torch/optim/sgd.h>

#include <unordered_map>
#include <vector>

#include "scenarios/optim/scaled_groups.h"

namespace ddpbench::scenarios {

class MultiTensorSGD : public torch::optim::SGD, public ScaledGroups {
 public:
  MultiTensorSGD(std::vector<at::Tensor> parameters, torch::optim::SGDOptions options);
  // Parameter groups, each with its own options (optim/parameter_groups.h).
  MultiTensorSGD(std::vector<torch::optim::OptimizerParamGroup> groups,
                 torch::optim::SGDOptions defaults);

  // Evaluates `closure` first when given (as SGD::step does) and returns its loss.
  at::Tensor step(LossClosure closure = nullptr) override;

  // The momentum buffer of `parameter` (undefined before its first step with momentum), and its
  // replacement (undefined erases it), under the key the optimizer uses in this libtorch release.
  at::Tensor momentum_buffer(const at::Tensor& parameter);
  void set_momentum_buffer(const at::Tensor& parameter, const at::Tensor& buffer);

 private:
  void step_group_on_cpu(const torch::optim::SGDOptions& options,
                         const std::vector<at::Tensor>& params,
                         const std::vector<at::Tensor>& grads);
  // The scratch tensor of a parameter (created on first use, the parameter's shape and dtype).
  at::Tensor& scratch(const at::Tensor& parameter);
  std::unordered_map<const void*, at::Tensor> scratch_;  // keyed by the parameter's TensorImpl
};

}  // namespace ddpbench::scenarios

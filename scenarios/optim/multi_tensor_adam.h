// multi_tensor_adam.h — Adam and AdamW whose step updates every parameter of a group with
// multi-tensor (`_foreach_*`) kernels, as Python's torch.optim.Adam and AdamW do by default on
// CUDA (foreach=True): a handful of kernel launches per group instead of a handful per parameter,
// what makes a transformer's optimizer step cheap on a GPU (issue 77 item 2). The arithmetic is
// libtorch's Adam and AdamW, operation for operation (weight decay added to the gradient, or the
// parameter shrunk by 1 - lr x weight_decay; the moments' mul_ and add_ / addcmul_; sqrt, the
// division by sqrt(bias_correction2), + eps; addcdiv_ by -lr / bias_correction1), so on the CPU,
// where a _foreach kernel is the per-tensor kernel in a loop, the results are libtorch's bit for
// bit (tests/unit/scenarios_optimizer_recipe_test.cpp). The state lives in the optimizer's own
// map under the same keys and classes (AdamParamState, AdamWParamState), so everything that reads
// Adam's state (optimizer_state.h, checkpoints, lockstep) works with either. amsgrad is not
// offered (make_optimizer never sets it).
#pragma once

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <vector>

#include "scenarios/optim/scaled_groups.h"

namespace ddpbench::scenarios {

class MultiTensorAdam : public torch::optim::Adam, public ScaledGroups {
 public:
  MultiTensorAdam(std::vector<torch::optim::OptimizerParamGroup> groups,
                  torch::optim::AdamOptions defaults);
  // Evaluates `closure` first when given (as Adam::step does) and returns its loss.
  at::Tensor step(LossClosure closure = nullptr) override;
};

class MultiTensorAdamW : public torch::optim::AdamW, public ScaledGroups {
 public:
  MultiTensorAdamW(std::vector<torch::optim::OptimizerParamGroup> groups,
                   torch::optim::AdamWOptions defaults);
  at::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace ddpbench::scenarios

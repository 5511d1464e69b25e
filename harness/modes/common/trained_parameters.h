// trained_parameters.h — the parameters a data-parallel engine reduces and shards: those that
// require grad, each tensor once (a tied weight under its first name), in named_parameters order,
// as PyTorch's DDP constructor collects them. A frozen parameter has no gradient to reduce and no
// hook to wait for; every engine (ddpbench's bucketed and naive DDP, c10d's Reducer, zero's
// partition) skips it alike, and the constructor's broadcast still sends it, as DDP's does.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace ddpbench::modes {

struct TrainedParameters {
  std::vector<std::string> names;
  std::vector<at::Tensor> tensors;
};

TrainedParameters trained_parameters(const torch::nn::Module& module);

// The name of each of `parameters` (tensors of `module`, or of a zero rank's subset) as
// named_parameters first gives it: what the optimizer's parameter groups read
// (scenarios/optim/parameter_groups.h). Throws std::logic_error for a tensor not in the module.
std::vector<std::string> parameter_names(const torch::nn::Module& module,
                                         const std::vector<at::Tensor>& parameters);

}  // namespace ddpbench::modes

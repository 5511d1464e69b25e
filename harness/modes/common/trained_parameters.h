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

}  // namespace ddpbench::modes

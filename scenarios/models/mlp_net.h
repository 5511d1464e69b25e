// mlp_net.h — a two-layer perceptron, fc1 (in -> hidden) -> tanh -> fc2 (hidden -> out): the
// smallest model whose gradients are not linear in the batch, for scenarios about how gradients
// are combined (grad_accum) rather than about the model.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "scenarios/models/forward_probe.h"

namespace ddpbench::scenarios::models {

class MlpImpl : public torch::nn::Cloneable<MlpImpl>, public ProbedModule {
 public:
  MlpImpl(int64_t in, int64_t hidden, int64_t out) : in_(in), hidden_(hidden), out_(out) {
    reset();
  }
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

 private:
  int64_t in_, hidden_, out_;
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Mlp);

}  // namespace ddpbench::scenarios::models

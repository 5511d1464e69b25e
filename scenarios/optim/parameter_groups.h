// parameter_groups.h — the optimizer's parameter groups (OPTIM.NO_DECAY), as nanoGPT's
// configure_optimizers and torchtitan build them: the parameters a rule matches step with weight
// decay 0, the rest with the scenario's. Every mode builds its optimizer through this, over the
// tensors it steps (a zero rank's owned parameters, stage 3's shards: each keeps its model
// parameter's name and number of dimensions), so the groups are the same everywhere and zero's
// sharded optimizer keeps each parameter in its group on its owner.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace ddpbench::scenarios {

// The rule that names "every tensor of fewer than 2 dimensions" (biases, LayerNorm and BatchNorm
// gains): nanoGPT's `p.dim() < 2`.
inline constexpr const char* kOneDimensionalRule = "1d";

// Whether the parameter `name` (`dims` dimensions in the model) steps without weight decay:
// `rules` holds "1d" (dims < 2) and substrings of parameter names ("bias", "norm", "wte").
bool without_weight_decay(const std::vector<std::string>& rules, const std::string& name,
                          int64_t dims);

// The indices of `names` that step without weight decay, in order.
std::vector<size_t> no_decay_indices(const std::vector<std::string>& rules,
                                     const std::vector<std::string>& names,
                                     const std::vector<at::Tensor>& parameters);

// A parameter group: the indices of its parameters, and whether it steps with weight decay.
struct ParameterGroupIndices {
  std::vector<size_t> members;
  bool decays = true;
};

// nanoGPT's groups over `parameters`: those with weight decay, then those OPTIM.NO_DECAY's `rules`
// take out of it. A group with no parameter is left out (libtorch refuses none, Python keeps it
// empty: the same steps either way); with no parameter at all, one empty decaying group. What the
// optimizer is built in (training_recipe.h) and what a checkpoint's param_groups list.
std::vector<ParameterGroupIndices> parameter_group_indices(
    const std::vector<std::string>& rules, const std::vector<std::string>& names,
    const std::vector<at::Tensor>& parameters);

}  // namespace ddpbench::scenarios

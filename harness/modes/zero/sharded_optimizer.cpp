// sharded_optimizer.cpp — see sharded_optimizer.h.
#include "modes/zero/sharded_optimizer.h"

#include <torch/torch.h>

#include "scenarios/optim/optimizer_state.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes::zero {
namespace {

std::vector<std::vector<int64_t>> one_group(const std::vector<at::Tensor>& parameters) {
  std::vector<int64_t> numels;
  numels.reserve(parameters.size());
  for (const at::Tensor& p : parameters) numels.push_back(p.numel());
  return {numels};
}

}  // namespace

ShardedOptimizer::ShardedOptimizer(std::vector<at::Tensor> parameters,
                                   const scenarios::OptimizerSpec& spec, comm::Communicator& comm)
    : parameters_(std::move(parameters)),
      comm_(comm),
      partition_(partition_parameters(one_group(parameters_), comm.world_size())) {
  std::vector<at::Tensor> owned;
  for (const int64_t i : partition_.rank_params[static_cast<size_t>(comm_.rank())]) {
    owned.push_back(parameters_[static_cast<size_t>(i)]);
  }
  local_ = scenarios::make_optimizer(spec, std::move(owned));
}

ShardedOptimizer::~ShardedOptimizer() = default;

void ShardedOptimizer::step() {
  local_->step();
  // Every rank's parameters from their owner, one broadcast per owner with parameters (torch's
  // ZeroRedundancyOptimizer broadcasts per rank as well); a rank without any sends nothing.
  torch::NoGradGuard no_grad;
  for (int owner = 0; owner < comm_.world_size(); ++owner) {
    std::vector<at::Tensor> tensors;
    for (const int64_t i : partition_.rank_params[static_cast<size_t>(owner)]) {
      tensors.push_back(parameters_[static_cast<size_t>(i)]);
    }
    if (!tensors.empty()) comm_.broadcast(tensors, owner);
  }
}

int64_t ShardedOptimizer::state_bytes() {
  int64_t bytes = 0;
  for (const int64_t i : partition_.rank_params[static_cast<size_t>(comm_.rank())]) {
    const scenarios::ParameterState state =
        scenarios::parameter_state(*local_, parameters_[static_cast<size_t>(i)]);
    for (const auto& [name, t] : state) bytes += t.numel() * static_cast<int64_t>(t.element_size());
  }
  return bytes;
}

}  // namespace ddpbench::modes::zero

// consolidated_state.h — the zero mode's optimizer state as one plain optimizer's, for checkpoints:
// each parameter's state gathered from its owner, as ZeroRedundancyOptimizer's
// consolidate_state_dict() gathers it, so that the checkpoint a zero run writes is the one a DDP
// run writes (and either resumes the other: a run's optimizer loads only what it holds).
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "modes/zero/zero_partition.h"
#include "scenarios/scenario.h"

namespace torch::optim {
class Optimizer;
}

namespace ddpbench::modes::zero {

// Collective: a plain optimizer of `spec` over every one of `model_parameters` (the model's order,
// frozen ones too, as the reference's optimizer holds them), holding each of the `partitioned`
// parameters' state from `local`, the optimizer of its owner under `partition`. Every rank gets
// it (one broadcast per owner); it is a copy: stepping it changes nothing.
std::unique_ptr<torch::optim::Optimizer> consolidate_optimizer(
    const std::vector<at::Tensor>& model_parameters, const std::vector<std::string>& model_names,
    const std::vector<at::Tensor>& partitioned, const ZeroPartition& partition,
    torch::optim::Optimizer& local, const scenarios::OptimizerSpec& spec, comm::Communicator& comm);

}  // namespace ddpbench::modes::zero

// batch_export.h — `run --export-batches`: writes batches.pt (torch.load-able) with the initial
// state and every step's global batch, so reference/torch_ddp_oracle.py can train PyTorch's own
// DistributedDataParallel on exactly the samples ddpbench used.
#pragma once

#include <string>
#include <vector>

#include "data/batch_plan.h"
#include "modes/common/model_state.h"
#include "runtime/execution_context.h"
#include "training/run_setup.h"

namespace ddpbench::training {

// `initial_state` must be captured before any training, already placed by `context`.
std::vector<char> export_batches(const RunSetup& setup, const runtime::ExecutionContext& context,
                                 const data::Dataset& dataset, const data::GlobalBatchPlan& plan,
                                 const modes::NamedTensors& initial_state);

}  // namespace ddpbench::training

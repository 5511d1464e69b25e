// data_parallel_path.h — DataParallel-style mode, torch.nn.DataParallel semantics in ddpbench's
// own code: one process, K replicas, K = the plan's number of replicas. The replicas run as K
// threads of this process on the context's replica devices (cuda:r for replica r, or the CPU).
// Each step scatters the global batch in rank order (chunk r = rank r's slice of the plan),
// copies the master's parameters and buffers into every replica, runs the replicas' forwards in
// parallel, gathers the outputs in replica order, takes the loss on the gathered output,
// backpropagates, SUMS the replicas' gradients into the master (DataParallel's reduce-add), and
// the optimizer steps the master. Only replica 0's in-place buffer updates persist, as in
// PyTorch. It shares neither the DDP gradient path nor the single-device one. With one replica on
// the master's device it does what torch.nn.DataParallel does with one device id: scatter, then
// call the module itself (no replica, no reduce-add, no gather).
#pragma once

#include <memory>
#include <optional>

#include "modes/common/fault_injection.h"
#include "modes/common/gradient_path.h"
#include "runtime/execution_context.h"
#include "scenarios/scenario.h"

namespace ddpbench::modes::data_parallel {

// The instance's model becomes the master; `spec` and `instance` must outlive the path.
// `fault`: the check phase's `dpbuffers` fault (modes/common/fault_injection.h), if any.
std::unique_ptr<GradientPath> make_data_parallel_path(const scenarios::ScenarioSpec& spec,
                                                      scenarios::ScenarioInstance& instance,
                                                      int64_t replicas,
                                                      const runtime::ExecutionContext& context,
                                                      std::optional<FaultSpec> fault = {});

}  // namespace ddpbench::modes::data_parallel

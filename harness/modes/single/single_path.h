// single_path.h — single-device mode: the reference every other mode is judged against. It trains
// on the whole global batch of each step (the concatenation of all ranks' local batches from the
// plan) with plain autograd. By design it depends on no communication code and on no other mode
// (docs/ARCHITECTURE.md, "Layers"): the build gives this folder no way to include them.
#pragma once

#include <memory>

#include "modes/common/gradient_path.h"
#include "runtime/execution_context.h"
#include "scenarios/scenario.h"

namespace ddpbench::modes::single {

// Places the instance's model (context dtype and device) and trains it; `spec` and `instance`
// must outlive the path.
std::unique_ptr<GradientPath> make_single_path(const scenarios::ScenarioSpec& spec,
                                               scenarios::ScenarioInstance& instance,
                                               const runtime::ExecutionContext& context);

}  // namespace ddpbench::modes::single

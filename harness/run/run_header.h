// run_header.h — the lines a run prints before it trains: what runs, on what data, with which
// plan, modes, phases and devices, so a log says what its figures mean.
#pragma once

#include "data/batch_plan.h"
#include "modes/common/gradient_record.h"
#include "runtime/execution_context.h"
#include "scenarios/scenario.h"
#include "training/run_setup.h"

namespace ddpbench::run {

void print_run_header(const training::RunSetup& setup, const runtime::ExecutionContext& context,
                      const scenarios::ScenarioInstance& instance,
                      const data::GlobalBatchPlan& plan, modes::GradRecordKind grad);

}  // namespace ddpbench::run

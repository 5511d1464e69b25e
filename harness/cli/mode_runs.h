// mode_runs.h — runs (or collects) one mode and turns it into a ModeOutcome for finish_run.
// Shared by the launching parent and by rank 0 of an externally launched world.
#pragma once

#include "cli/run_outcome.h"
#include "cli/run_setup.h"
#include "data/batch_plan.h"
#include "modes/ddp/ddp_worker.h"
#include "modes/gradient_record.h"
#include "scenarios/scenario.h"

namespace ddpbench::cli {

// --grad-check auto|full|fingerprint resolved for this model.
modes::GradRecordKind resolve_grad_record(const RunSetup& setup, const torch::nn::Module& model);

ModeOutcome run_single_mode(const RunSetup& setup, scenarios::ScenarioInstance& instance,
                            const data::GlobalBatchPlan& plan, modes::GradRecordKind kind);

// DataParallel-style: one process, setup.world_size replicas as threads.
ModeOutcome run_dp_mode(const RunSetup& setup, scenarios::ScenarioInstance& instance,
                        const data::GlobalBatchPlan& plan, modes::GradRecordKind kind);

ModeOutcome ddp_outcome(const RunSetup& setup, modes::ddp::DdpWorkerResult result,
                        std::vector<std::string> param_names);

std::vector<std::string> parameter_names(const torch::nn::Module& model);

}  // namespace ddpbench::cli

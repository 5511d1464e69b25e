// prepare_run.h — the one start-up of `ddpbench run`, shared by the launching parent and every
// rank, whichever launcher started it (ddpbench's own spawn, torchrun, srun, mpirun): the request
// resolved and checked (run_setup.h), the process configured, the dataset, a fresh model, the plan
// and the gradient record built, and every check that needs them made (fit_checks.h,
// first_sample_probe.h). Two start-ups drifted once
// (a rank under torchrun accepted --sync-bn on a model without BatchNorm that the parent refused),
// so there is one: a refusal is the same line and exit 2 everywhere, made before anything is
// written or any rank joins a rendezvous.
#pragma once

#include <memory>
#include <optional>

#include "data/batch_plan.h"
#include "data/dataset.h"
#include "data/device_data.h"
#include "launch/environment.h"
#include "modes/common/gradient_record.h"
#include "requests/run_request.h"
#include "runtime/execution_context.h"
#include "scenarios/registry.h"
#include "scenarios/scenario.h"
#include "training/run_setup.h"

namespace ddpbench::run {

struct PreparedRun {
  training::RunSetup setup;
  runtime::ExecutionContext context;
  std::shared_ptr<const data::Dataset> dataset;
  // A freshly initialised model (the header describes it; the exact references and
  // --export-batches start from it). Every phase of every mode builds its own.
  scenarios::ScenarioInstance instance;
  data::GlobalBatchPlan plan;
  modes::GradRecordKind grad = modes::GradRecordKind::kFull;
  // --data-on-device: the dataset's device form, materialised when a loop first asks (a parent
  // that only launches ranks never does); null without the flag.
  std::shared_ptr<data::SharedDeviceData> on_device;
};

// `world` is the launched world this process is a rank of, or nullopt for the launching parent.
// Returns nullopt when the scenario cannot run here (it says why on stderr; the run exits 0).
// Throws InputError (exit 2) naming the problem and the fix.
std::optional<PreparedRun> prepare_run(const requests::RunRequest& request,
                                       const scenarios::ScenarioRegistry& registry,
                                       const std::optional<launch::WorldInfo>& world);

}  // namespace ddpbench::run

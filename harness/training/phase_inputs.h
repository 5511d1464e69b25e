// phase_inputs.h — what every phase of every mode, the exact references and the lockstep driver
// start from. Its own header so that the lockstep driver (which the phases use) and the phases
// can both see it without seeing each other.
#pragma once

#include <memory>

#include "data/batch_plan.h"
#include "data/dataset.h"
#include "data/device_data.h"
#include "modes/common/gradient_record.h"
#include "runtime/execution_context.h"
#include "training/run_setup.h"

namespace ddpbench::training {

// What the phases share: the validated run, this process's context, the run's dataset and plan
// (K replicas, the global batch), and how gradients are recorded.
struct PhaseInputs {
  const RunSetup& setup;
  const runtime::ExecutionContext& context;
  std::shared_ptr<const data::Dataset> dataset;
  const data::GlobalBatchPlan& plan;
  modes::GradRecordKind grad_record;
  // --data-on-device: the dataset's device form, shared by every loop of this process (null:
  // batches are collated on the host).
  const data::SharedDeviceData* on_device = nullptr;
};

}  // namespace ddpbench::training

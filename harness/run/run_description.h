// run_description.h — what the end of a run needs beyond the setup and the outcomes: the dataset
// and plan as trained, the gradient record, the command line, a fresh model (what the exact
// references model), the phases' inputs (for a rounding floor) and the --bisect re-run.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "data/batch_plan.h"
#include "reports/run/run_record.h"
#include "training/phase_inputs.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace ddpbench::run {

struct RunDescription {
  std::string dataset;
  const data::GlobalBatchPlan* plan = nullptr;
  std::string grad_record;  // "full" or "fingerprint"
  std::vector<std::string> argv;
  const torch::nn::Module* model = nullptr;  // a fresh instance: what the exact references model
  // What the phases trained from: a failing comparison's rounding floor is measured from it
  // (training/floor_measurement.h); null: none is measured.
  const training::PhaseInputs* inputs = nullptr;
  // --bisect: annotates a failing report's first divergences from a float64 re-run (run/bisect.h);
  // empty where the run cannot start one (under an external launcher).
  std::function<void(reports::RunReport&)> bisect;
};

}  // namespace ddpbench::run

// single_trainer.h — single-device mode: the reference every other mode is judged against.
// It trains on the whole global batch of each step (the concatenation of all ranks' local batches
// from the plan) with plain autograd and the shared optimizer factory. By design it depends on no
// dist code and on no other mode (DESIGN.md "Who may include whom").
#pragma once

#include <ATen/core/TensorBody.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "data/batch_plan.h"
#include "metrics/step_statistics.h"
#include "modes/model_state.h"
#include "scenarios/scenario.h"

namespace torch::nn {
class Module;
}

namespace ddpbench::modes {

struct SingleTrainOptions {
  int64_t steps = 1;
  at::ScalarType dtype = at::kFloat;  // kFloat or kDouble: model and inputs are cast to it
  // Observer called after each backward, before the optimizer step (gradient recording).
  std::function<void(int64_t step, const torch::nn::Module& module)> after_backward;
  // Called after each step with its loss (progress display).
  std::function<void(int64_t step, double loss)> on_step;
};

struct SingleTrainResult {
  std::vector<double> losses;                   // mean loss of each step's global batch
  std::vector<metrics::PhaseTimes> step_times;  // per step
  NamedTensors final_state;                     // parameters and buffers after the last step
};

// Throws WorkerFailure("single: non-finite loss at step S") if the loss becomes NaN or Inf.
SingleTrainResult train_single(const scenarios::ScenarioSpec& spec,
                               scenarios::ScenarioInstance& instance,
                               const data::GlobalBatchPlan& plan,
                               const SingleTrainOptions& options);

}  // namespace ddpbench::modes

// dp_trainer.h — DataParallel-style mode, torch.nn.DataParallel semantics in ddpbench's own code:
// one process, K replicas (K threads on CPU; K GPUs with CUDA). Each step scatters the global
// batch in rank order (chunk r = rank r's slice of the plan), copies the master's parameters and
// buffers into every replica, runs the replicas' forwards in parallel, gathers the outputs on
// replica 0, takes the loss on the gathered output, backpropagates, SUMS the replicas' gradients
// into the master (DataParallel's reduce-add), and steps the optimizer once. Only replica 0's
// in-place buffer updates persist, as in PyTorch. It shares neither the DDP gradient path nor
// the single-device training loop.
#pragma once

#include <ATen/core/TensorBody.h>

#include <functional>
#include <vector>

#include "data/batch_plan.h"
#include "metrics/step_statistics.h"
#include "modes/model_state.h"
#include "scenarios/scenario.h"

namespace torch::nn {
class Module;
}

namespace ddpbench::modes::data_parallel {

struct DpTrainOptions {
  int64_t steps = 1;
  at::ScalarType dtype = at::kFloat;
  // Observer after the reduce-add, before the optimizer step (gradient recording).
  std::function<void(int64_t step, const torch::nn::Module& master)> after_reduce;
  // Called after each step with its loss (progress display).
  std::function<void(int64_t step, double loss)> on_step;
};

struct DpTrainResult {
  std::vector<double> losses;
  std::vector<metrics::PhaseTimes> step_times;
  NamedTensors final_state;  // the master's
};

// The number of replicas is the plan's number of replicas. Throws WorkerFailure on a
// non-finite loss.
DpTrainResult train_data_parallel(const scenarios::ScenarioSpec& spec,
                                  scenarios::ScenarioInstance& instance,
                                  const data::GlobalBatchPlan& plan, const DpTrainOptions& options);

}  // namespace ddpbench::modes::data_parallel

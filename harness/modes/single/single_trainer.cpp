// single_trainer.cpp — see single_trainer.h.
#include "modes/single/single_trainer.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "errors.h"
#include "metrics/stopwatch.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes {

SingleTrainResult train_single(const scenarios::ScenarioSpec& spec,
                               scenarios::ScenarioInstance& instance,
                               const data::GlobalBatchPlan& plan,
                               const SingleTrainOptions& options) {
  torch::nn::Module& module = *instance.model.ptr();
  cast_floating_point(module, options.dtype);
  module.train();
  // The optimizer is created after the dtype cast so it holds the final parameter tensors.
  auto optimizer = scenarios::make_optimizer(spec.optimizer, module.parameters());

  SingleTrainResult result;
  data::PlanCursor cursor(plan);
  for (int64_t step = 0; step < options.steps; ++step) {
    metrics::Stopwatch watch;
    metrics::PhaseTimes t;
    data::StepPosition pos;
    const data::EpochPlan& epoch = cursor.seek(step, pos);
    const data::Batch batch = data::cast_batch(
        data::collate(*instance.dataset, epoch.global_batch(pos.step_in_epoch), pos.epoch),
        options.dtype);
    const at::Tensor& inputs = batch.inputs;
    const at::Tensor& targets = batch.targets;
    t.data = watch.lap();

    optimizer->zero_grad();
    at::Tensor output = instance.model.forward(inputs);
    at::Tensor loss = scenarios::compute_loss(spec.loss, output, targets);
    t.forward = watch.lap();
    loss.backward();
    t.backward = watch.lap();
    if (options.after_backward) options.after_backward(step, module);
    watch.lap();  // observation is not training time
    optimizer->step();
    t.optimizer = watch.lap();

    const double value = loss.item<double>();
    if (!std::isfinite(value)) {
      throw WorkerFailure(fmt::format("single: non-finite loss ({}) at step {}", value, step));
    }
    result.losses.push_back(value);
    if (options.on_step) options.on_step(step, value);
    t.total = t.data + t.forward + t.backward + t.optimizer;
    result.step_times.push_back(t);
  }
  result.final_state = capture_state(module);
  return result;
}

}  // namespace ddpbench::modes

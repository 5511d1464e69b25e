// step_loop.cpp — see step_loop.h.
#include "modes/common/step_loop.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <cmath>

#include "errors.h"
#include "runtime/parallel_for.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes {
namespace {

// Collates and places the step's shards, one thread per shard when the mode asks for several
// (every dataset is thread-safe by contract: keyed randomness, no shared state).
std::vector<data::Batch> load_shards(const GradientPath& path, const TrainInputs& in,
                                     data::PlanCursor& cursor, int64_t step) {
  data::StepPosition pos;
  const data::EpochPlan& epoch = cursor.seek(step, pos);
  const std::vector<std::vector<int64_t>> samples = path.step_shards(epoch, pos.step_in_epoch);
  std::vector<data::Batch> shards(samples.size());
  runtime::parallel_for(static_cast<int64_t>(samples.size()), [&](int64_t i) {
    const auto s = static_cast<size_t>(i);
    shards[s] = in.context.place_batch(data::collate(in.dataset, samples[s], pos.epoch));
  });
  return shards;
}

}  // namespace

const char* step_phase_name(StepPhase phase) {
  switch (phase) {
    case StepPhase::kData:
      return "loading data";
    case StepPhase::kForward:
      return "forward";
    case StepPhase::kBackward:
      return "backward";
    case StepPhase::kCommWait:
      return "waiting for gradient allreduce";
    case StepPhase::kOptimizer:
      return "optimizer step";
    case StepPhase::kDone:
      return "step done";
  }
  return "?";
}

TrainResult train(GradientPath& path, const TrainInputs& in, const TrainOptions& options) {
  using runtime::Phase;
  torch::nn::Module& module = path.module();
  module.train();
  auto optimizer = scenarios::make_optimizer(in.spec.optimizer, module.parameters());
  const std::unique_ptr<runtime::PhaseTimer> timer = in.context.make_phase_timer();
  // Untimed: the observer runs, then the clock restarts.
  auto enter = [&](int64_t step, StepPhase phase) {
    if (options.on_phase) options.on_phase(step, phase);
    timer->resume();
  };

  TrainResult result;
  data::PlanCursor cursor(in.plan);
  for (int64_t step = 0; step < options.steps; ++step) {
    enter(step, StepPhase::kData);
    const std::vector<data::Batch> shards = load_shards(path, in, cursor, step);
    timer->stop(Phase::kData);

    enter(step, StepPhase::kForward);
    optimizer->zero_grad();
    const at::Tensor loss = path.forward_loss(shards, step);
    timer->stop(Phase::kForward);

    enter(step, StepPhase::kBackward);
    path.backward(loss);
    timer->stop(Phase::kBackward);

    enter(step, StepPhase::kCommWait);
    path.reduce_gradients();
    timer->stop(Phase::kCommWait);
    if (options.checking) {
      result.gradients.push_back(record_gradients(module, options.grad_record));
    }

    enter(step, StepPhase::kOptimizer);
    optimizer->step();
    timer->stop(Phase::kOptimizer);
    result.step_times.push_back(timer->finish_step());
    if (options.on_phase) options.on_phase(step, StepPhase::kDone);

    // Read at the step boundary, where reading a device value costs no overlap. A non-finite loss
    // is a failure, never a number to compare; in DDP the rank that produced it stops here,
    // before the checked-step collectives, so the launcher can name it.
    const double value = loss.item<double>();
    if (!std::isfinite(value)) {
      throw WorkerFailure(
          fmt::format("{}: non-finite loss ({}) at step {}", path.who(), value, step));
    }
    if (options.checking) {
      int64_t samples = 0;
      for (const data::Batch& b : shards) samples += b.inputs.size(0);
      result.losses.push_back(path.finish_checked_step(step, value, samples));
    }
    if (options.on_step) options.on_step(step, value);
  }
  if (options.checking) result.final_state = capture_state(module);
  return result;
}

}  // namespace ddpbench::modes

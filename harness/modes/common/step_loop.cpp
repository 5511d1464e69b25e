// step_loop.cpp — see step_loop.h.
#include "modes/common/step_loop.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "errors.h"
#include "modes/common/step_batches.h"
#include "modes/common/zero_gradients.h"
#include "scenarios/memory_format.h"
#include "scenarios/optim/autocast_scope.h"
#include "scenarios/optim/clip_grad_norm.h"
#include "scenarios/optim/grad_scaler.h"
#include "scenarios/optim/lr_schedule.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes {

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

StepLoop::StepLoop(GradientPath& path, const TrainInputs& in, TrainOptions options)
    : path_(path),
      in_(in),
      options_(std::move(options)),
      optimizer_(path.make_optimizer(in.spec.optimizer)),
      timer_(in.context.make_phase_timer()),
      batches_(in.dataset, in.plan, in.context, at::get_num_threads(),
               in.on_device != nullptr ? in.on_device->get() : nullptr,
               scenarios::input_memory_format(in.spec)),
      autocast_(scenarios::autocast_dtype_of(in.spec.amp)) {
  in.context.enter_phase(options_.numerics);  // a no-op on the CPU
  if (in.spec.amp == scenarios::AmpKind::kFp16) {
    scaler_ = std::make_unique<scenarios::GradScaler>(in.spec.grad_scaler, in.context.device());
  }
  path_.module().train();
  if (options_.start_state) {
    path_.gather_state(*optimizer_);
    load_training_state(path_.module(), *optimizer_, *options_.start_state);
    path_.release_state(*optimizer_);
    if (scaler_ && options_.start_state->grad_scaler) {
      const TrainingState::GradScalerState& g = *options_.start_state->grad_scaler;
      scaler_->set_state(at::full({}, g.scale, at::kFloat),
                         at::full({}, g.growth_tracker, at::kInt));
    }
  }
}

StepLoop::~StepLoop() = default;

void StepLoop::enter(int64_t step, StepPhase phase) {
  // Untimed: the observer runs, then the clock restarts.
  if (options_.on_phase) options_.on_phase(step, phase);
  timer_->resume();
}

at::Tensor StepLoop::run_micro_steps(int64_t step,
                                     const std::vector<std::vector<data::Batch>>& micro) {
  // Gradient accumulation (one pass without it): the loss of each micro-step is scaled by
  // 1/micro_steps, so the accumulated gradient is that of the mean over the whole step's batch.
  // The phases' times add up over the micro-steps.
  using runtime::Phase;
  torch::nn::Module& module = path_.module();
  const int64_t micro_steps = options_.micro_steps;
  at::Tensor loss;
  for (int64_t m = 0; m < micro_steps; ++m) {
    path_.set_gradient_sync(!options_.no_sync || m == micro_steps - 1);
    enter(step, StepPhase::kForward);
    if (options_.trace) options_.trace->begin_micro_step(m);
    if (m == 0) zero_gradients(module.parameters());
    if (m == 0 && options_.slow_ms > 0) {
      // Busy, not asleep: a slower rank holds its core as it computes, and a spin ends within
      // microseconds of the deadline where a sleep of a fraction of a millisecond overshoots by
      // the scheduler's wake-up latency (measured: +0.05 ms on 0.09 ms).
      const auto until = std::chrono::steady_clock::now() +
                         std::chrono::duration<double, std::milli>(options_.slow_ms);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    at::Tensor micro_loss;
    {
      // `with torch.autocast(...)`: forward and loss only; backward runs outside it.
      std::optional<scenarios::AutocastScope> autocast;
      if (autocast_) autocast.emplace(in_.context.device().type(), *autocast_);
      micro_loss = path_.forward_loss(micro[static_cast<size_t>(m)], step);
    }
    if (micro_steps > 1 && step != options_.unscaled_step) {
      micro_loss = micro_loss / static_cast<double>(micro_steps);
    }
    timer_->stop(Phase::kForward);

    enter(step, StepPhase::kBackward);
    path_.backward(scaler_ ? scaler_->scale(micro_loss) : micro_loss);
    timer_->stop(Phase::kBackward);

    enter(step, StepPhase::kCommWait);
    path_.reduce_gradients();
    timer_->stop(Phase::kCommWait);
    loss = m == 0 ? micro_loss.detach() : loss + micro_loss.detach();
  }
  return loss;
}

bool StepLoop::unscale_and_record(int64_t step) {
  torch::nn::Module& module = path_.module();
  // scaler.unscale_(optimizer), as a user calls it before clipping: the gradients recorded and
  // clipped are the unscaled ones. The scale this step used is read before update() changes it.
  double loss_scale = 0;
  if (step == options_.overflow_step) {
    at::Tensor& g = module.parameters().front().mutable_grad();
    if (g.defined() && g.numel() > 0) g.view(-1)[0].fill_(std::numeric_limits<double>::infinity());
  }
  if (scaler_) {
    loss_scale = scaler_->current_scale();
    std::vector<at::Tensor> grads;
    for (const at::Tensor& p : module.parameters()) grads.push_back(p.grad());
    scaler_->unscale(grads);
    path_.agree_on_overflow(*scaler_);
  }
  const bool skip = scaler_ && scaler_->found_inf();
  if (options_.checking) {
    // A skipped step's gradients held an inf or NaN: recorded as absent, compared through the
    // skipped step itself (compare::loss_scale_check).
    std::vector<at::Tensor> reduced;
    if (!skip) reduced = path_.gradients_to_record();
    result_.gradients.push_back(skip ? std::vector<at::Tensor>(module.parameters().size())
                                     : record_gradients(reduced, options_.grad_record));
    if (options_.trace) options_.trace->reduced(reduced, loss_scale);
    if (scaler_) {
      result_.loss_scales.push_back(loss_scale);
      result_.skipped.push_back(skip);
    }
  }

  return skip;
}

void StepLoop::end_step(int64_t step, const at::Tensor& loss,
                        const std::vector<data::Batch>& shards) {
  torch::nn::Module& module = path_.module();
  const int64_t micro_steps = options_.micro_steps;
  // Read at the step boundary, where reading a device value costs no overlap. A non-finite loss
  // is a failure, never a number to compare; in DDP the rank that produced it stops here,
  // before the checked-step collectives, so the launcher can name it.
  const double value = loss.item<double>();
  if (!std::isfinite(value)) {
    throw WorkerFailure(
        fmt::format("{}: non-finite loss ({}) at step {}", path_.who(), value, step));
  }
  if (options_.checking) path_.gather_state(*optimizer_);  // observed whole from here
  if (options_.checking) {
    int64_t samples = 0;
    for (const data::Batch& b : shards) samples += micro_steps * b.inputs.size(0);
    result_.losses.push_back(path_.finish_checked_step(step, value, samples));
    if (options_.trace) {
      // Collective in the per-rank modes: every rank's local gradients to the tracing rank.
      options_.trace->set_every_rank(path_.every_rank_gradients(options_.trace->local_gradients()));
      options_.trace->end_step(result_.losses.back(), module, *optimizer_);
    }
    if (scaler_) path_.check_loss_scale(step, scaler_->current_scale());
  }
  if (options_.on_step) options_.on_step(step, value);
  if (options_.after_step) options_.after_step(step, module, *optimizer_, scaler_.get());
  path_.release_state(*optimizer_);
  if (options_.at_rest) options_.at_rest(step, module, *optimizer_);
}

void StepLoop::step_optimizer(int64_t step) {
  // The schedule sets every group's rate before the step, as a user's loop sets g['lr'] (or a
  // scheduler stepped after the previous optimizer step left it): once per optimizer step, never
  // per micro-step.
  const scenarios::OptimizerSpec& spec = in_.spec.optimizer;
  const int64_t scheduled = step == options_.schedule_ahead_step ? step + 1 : step;
  const scenarios::ScheduledStep set = scenarios::scheduled_step(spec.schedule, spec.lr, scheduled);
  scenarios::set_scheduled_rates(*optimizer_, spec, scheduled);
  if (set.momentum) scenarios::set_momentum(*optimizer_, *set.momentum);
  if (step != options_.decay_everything_step) {
    path_.step_optimizer(*optimizer_);
    return;
  }
  const std::vector<double> decays = scenarios::weight_decays(*optimizer_);
  scenarios::set_weight_decays(*optimizer_, std::vector<double>(decays.size(), spec.weight_decay));
  path_.step_optimizer(*optimizer_);
  scenarios::set_weight_decays(*optimizer_, decays);
}

void StepLoop::run_step(int64_t step) {
  using runtime::Phase;
  torch::nn::Module& module = path_.module();
  if (options_.before_step || options_.trace) {
    path_.gather_state(*optimizer_);
    if (options_.before_step) options_.before_step(step, module, *optimizer_);
    if (options_.trace) options_.trace->begin_step(step, module, *optimizer_);
    path_.release_state(*optimizer_);
  }

  enter(step, StepPhase::kData);
  const int64_t micro_steps = options_.micro_steps;
  const std::vector<std::vector<data::Batch>> micro = batches_.load(path_, step, micro_steps);
  timer_->stop(Phase::kData);
  if (scaler_ && step == options_.diverged_scale_step) {
    // The `scaler` fault: this rank's scale parts from the others' (pytorch/pytorch#90057). DDP
    // averages the scaled gradients, so each rank then unscales a mix of two scales by its own:
    // the gradients part too, and the scale check names where it began.
    scaler_->set_state(scaler_->scale_tensor() * 2, scaler_->growth_tracker_tensor());
  }

  const at::Tensor loss = run_micro_steps(step, micro);
  const bool skip = unscale_and_record(step);
  enter(step, StepPhase::kOptimizer);
  // The scenario's clipping acts on the gradients the mode trains with (after its reduction: each
  // DDP rank clips the same averaged gradients, as clip_grad_norm_ after DDP's backward does).
  // The gradients recorded above are those before clipping: what the mode's path computed, so a
  // wrong gradient is named by its own tensor rather than by the shared clip coefficient it moves;
  // the clipped update is judged through the parameters (lockstep: each step's update).
  // scaler.step(optimizer): no clipping and no step when a gradient overflowed; then update().
  const bool steps = path_.steps_this_step();
  if (in_.spec.clip_grad_norm && !skip && steps) {
    path_.clip_gradients(*in_.spec.clip_grad_norm);
  }
  if (!skip && steps) step_optimizer(step);
  if (scaler_ && steps) scaler_->update();
  path_.end_step(step == options_.first_step + options_.steps - 1);
  timer_->stop(Phase::kOptimizer);
  result_.step_times.push_back(timer_->finish_step());
  if (options_.on_phase) options_.on_phase(step, StepPhase::kDone);

  end_step(step, loss, micro.back());
}

TrainResult StepLoop::finish() {
  if (options_.checking) {
    path_.gather_state(*optimizer_);
    result_.final_state = capture_state(path_.module());
  }
  return std::move(result_);
}

TrainResult train(GradientPath& path, const TrainInputs& in, const TrainOptions& options) {
  StepLoop loop(path, in, options);
  for (int64_t step = options.first_step; step < options.first_step + options.steps; ++step) {
    loop.run_step(step);
  }
  return loop.finish();
}

}  // namespace ddpbench::modes

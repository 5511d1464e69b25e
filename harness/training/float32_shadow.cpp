// float32_shadow.cpp — see float32_shadow.h.
#include "training/float32_shadow.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "modes/common/step_loop.h"
#include "modes/common/training_state.h"
#include "modes/single/single_path.h"
#include "training/exact_reference.h"
#include "training/stepped_reference.h"

namespace ddpbench::training {
namespace {

// The run's scenario with autocast off: the float32 training the mode's --amp run stands in for.
std::shared_ptr<const scenarios::ScenarioSpec> without_amp(const scenarios::ScenarioSpec& spec) {
  auto copy = std::make_shared<scenarios::ScenarioSpec>(spec);
  copy->amp = scenarios::AmpKind::kOff;
  return copy;
}

// The mode's exact reference, as a float32 run of the mode would be judged against it.
modes::single::ReferenceRule float32_rule(const RunSetup& setup, modes::ModeKind mode,
                                          const torch::nn::Module& judged,
                                          std::shared_ptr<const scenarios::ScenarioSpec> spec) {
  if (mode == modes::ModeKind::kSingle) return {};
  RunSetup float32_setup = setup;
  float32_setup.spec = std::move(spec);
  return exact_reference_for(float32_setup, mode, judged).rule;
}

at::Tensor host_double(const at::Tensor& t) { return t.detach().to(at::kCPU, at::kDouble); }

}  // namespace

Float32Shadow::Float32Shadow(const PhaseInputs& in, modes::ModeKind mode,
                             const torch::nn::Module& judged) {
  auto spec = without_amp(*in.setup.spec);
  const modes::single::ReferenceRule rule = float32_rule(in.setup, mode, judged, spec);
  // A float32 model of its own (the run's initial weights, replaced before every step).
  modes::TrainOptions options = SteppedReference::base_options(in.setup);
  options.on_step = [this](int64_t, double loss) { float32_loss_ = loss; };
  model_ = std::make_unique<SteppedReference>(in, std::move(spec), rule, options);
}

Float32Shadow::~Float32Shadow() = default;

void Float32Shadow::before_step(int64_t step, torch::nn::Module& module,
                                torch::optim::Optimizer& optimizer) {
  modes::TrainingState state = modes::capture_training_state(module, optimizer);
  modes::load_training_state(model_->loop().module(), model_->loop().optimizer(), state);
  start_ = std::move(state.parameters);
  model_->loop().run_step(step);
}

void Float32Shadow::after_step(int64_t step, const torch::nn::Module& module) {
  const auto mode_params = module.named_parameters();
  const std::vector<at::Tensor> float32_params = model_->loop().module().parameters();
  // Both started from start_: the updates are what differs. The step's largest float32 update is
  // the scale, as gradients are judged (compare/tensor_diff.h, Note [Gradients at rounding level]).
  double largest = 0;
  std::vector<at::Tensor> starts;
  std::vector<at::Tensor> float32_updates;
  for (size_t i = 0; i < float32_params.size(); ++i) {
    starts.push_back(host_double(start_[i]));
    float32_updates.push_back(host_double(float32_params[i]) - starts.back());
    largest = std::max(largest, float32_updates.back().abs().max().item<double>());
  }
  StepError e{step, 0.0, "", float32_loss_};
  for (size_t i = 0; i < mode_params.size(); ++i) {
    const at::Tensor update = host_double(mode_params[i].value()) - starts[i];
    const double diff = (update - float32_updates[i]).abs().max().item<double>();
    const double err = largest > 0 ? diff / largest : diff;
    if (err > e.update_error || e.tensor.empty()) {
      e.update_error = err;
      e.tensor = mode_params[i].key();
    }
  }
  steps_.push_back(std::move(e));
}

reports::AmpErrorRecord Float32Shadow::finish(const modes::TrainResult& result,
                                              const std::string& amp) const {
  reports::AmpErrorRecord r;
  for (size_t s = 0; s < steps_.size(); ++s) {
    if (s < result.skipped.size() && result.skipped[s]) continue;
    const StepError& e = steps_[s];
    ++r.steps;
    if (r.update_step < 0 || e.update_error > r.update_error) {
      r.update_error = e.update_error;
      r.update_step = e.step;
      r.update_tensor = e.tensor;
    }
    if (s < result.losses.size()) {
      const double rel =
          std::abs(result.losses[s] - e.float32_loss) / std::max(std::abs(e.float32_loss), 1e-300);
      if (r.loss_step < 0 || rel > r.loss_rel_error) {
        r.loss_rel_error = rel;
        r.loss_step = e.step;
      }
    }
  }
  if (r.steps == 0) return r;
  const size_t skipped = steps_.size() - static_cast<size_t>(r.steps);
  r.summary = fmt::format(
      "autocast {} against float32 from the same state, {} step(s){}: updates differ by up to "
      "{:.2e} of the step's largest (step {}, {}), losses by up to {:.2e} relative (step {})",
      amp, r.steps,
      skipped > 0 ? fmt::format(" ({} skipped by the GradScaler left out)", skipped) : "",
      r.update_error, r.update_step, r.update_tensor, r.loss_rel_error, r.loss_step);
  return r;
}

}  // namespace ddpbench::training

// lockstep.cpp — see lockstep.h.
#include "training/lockstep.h"

#include <torch/torch.h>

#include "compare/tensor_diff.h"
#include "modes/common/step_loop.h"
#include "modes/common/training_state.h"
#include "modes/ranks/state_broadcast.h"
#include "modes/single/single_path.h"
#include "scenarios/optim/optimizer_state.h"
#include "training/comparison_policy.h"
#include "training/exact_reference.h"

namespace ddpbench::training {

namespace {

// Rank 0's parameters and optimizer state to every rank. Buffers stay each rank's own: DDP's
// broadcast before the forward must bring rank 0's (the `buffers` fault and the
// ranks_buffers_equal check depend on it).
void broadcast_state(comm::Communicator& comm, modes::TrainingState& s,
                     const torch::nn::Module& module) {
  modes::ranks::broadcast_parameter_states(comm, 0, module.parameters(), s.optimizer_state,
                                           s.parameters);
}

}  // namespace

LockstepDriver::LockstepDriver(const PhaseInputs& in, modes::ModeKind mode,
                               const torch::nn::Module& judged, comm::Communicator* comm)
    : in_(in), comm_(comm) {
  const compare::ComparisonPolicy policy = comparison_policy(in.setup, mode, "full");
  tolerance_ = policy.state;
  gradient_limit_ = policy.gradient_tolerance;
  if (comm_ == nullptr || comm_->rank() == 0) {
    // The exact reference, one step at a time, on its own fresh model (same initial weights).
    modes::TrainOptions options = SteppedReference::base_options(in.setup);
    options.start_state = in.setup.start_state();
    options.overflow_step = in.setup.overflow_step();
    reference_ = std::make_unique<SteppedReference>(
        in, in.setup.spec, exact_reference_for(in.setup, mode, judged).rule, options);
  }
}

LockstepDriver::~LockstepDriver() = default;

void LockstepDriver::record(int64_t step, const torch::nn::Module& module) {
  if (!reference_) return;
  torch::nn::Module& ref = reference_->loop().module();
  const auto ref_params = ref.named_parameters();
  const auto params = module.named_parameters();
  // Note [Gradients at rounding level] (compare/tensor_diff.h): the updates' own level, and the
  // elements whose reference gradient was at the gradients' level left out.
  double largest_update = 0.0;
  double largest_gradient = 0.0;
  for (size_t i = 0; i < ref_params.size(); ++i) {
    const at::Tensor& p = ref_params[i].value();
    largest_update = std::max(largest_update, compare::update_max_abs(p, start_parameters_[i]));
    if (p.grad().defined()) {
      largest_gradient = std::max(largest_gradient, compare::gradient_max_abs(p.grad(), false));
    }
  }
  const at::ScalarType dtype =
      ref_params.is_empty() ? at::kFloat : ref_params[0].value().scalar_type();
  const compare::RoundingLevel floor =
      compare::rounding_level(largest_update, dtype, gradient_limit_);
  const double gradient_level = compare::rounding_level(largest_gradient, dtype, 1.0).level;
  for (size_t i = 0; i < params.size(); ++i) {
    // Both started the step from start_parameters_: their updates are what differs.
    const at::Tensor& grad = ref_params[i].value().grad();
    const at::Tensor compared =
        grad.defined() ? grad.detach().abs().ge(gradient_level) : at::Tensor();
    const double err = compare::normalized_update_error(params[i].value(), ref_params[i].value(),
                                                        start_parameters_[i], floor, compared);
    diffs_.push_back({step, params[i].key(), false, err, err, 0});
  }
  const auto ref_buffers = ref.named_buffers();
  const auto buffers = module.named_buffers();
  for (size_t i = 0; i < buffers.size(); ++i) {
    const compare::TensorDiff d =
        compare::diff_tensors(buffers[i].value(), ref_buffers[i].value(), tolerance_);
    diffs_.push_back({step, buffers[i].key(), true, d.max_abs, d.max_rel, d.violations, d.max_ratio,
                      d.ref_max_abs});
  }
}

void LockstepDriver::before_step(int64_t step, torch::nn::Module& module,
                                 torch::optim::Optimizer& optimizer) {
  if (steps_done_ > 0) record(step - 1, module);  // not before the first (--resume: step > 0)
  modes::TrainingState state;
  if (reference_) {
    state =
        modes::capture_training_state(reference_->loop().module(), reference_->loop().optimizer());
  } else {
    // Shapes to receive into, and this rank's own buffers (kept).
    state = modes::capture_training_state(module, optimizer);
  }
  if (comm_ != nullptr) broadcast_state(*comm_, state, module);
  modes::load_training_state(module, optimizer, state);
  if (reference_) {
    start_parameters_ = std::move(state.parameters);
    reference_->loop().run_step(step);
  }
  steps_done_ = step + 1;
}

std::vector<compare::StateDiff> LockstepDriver::finish(const torch::nn::Module& module) {
  if (steps_done_ > 0) record(steps_done_ - 1, module);
  return std::move(diffs_);
}

}  // namespace ddpbench::training

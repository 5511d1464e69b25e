// lockstep.cpp — see lockstep.h.
#include "training/lockstep.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <cmath>
#include <set>

#include "comm/broadcast_coalesced.h"
#include "compare/tensor_diff.h"
#include "modes/common/step_loop.h"
#include "modes/common/training_state.h"
#include "modes/ranks/state_broadcast.h"
#include "modes/single/single_path.h"
#include "scenarios/optim/optimizer_state.h"
#include "scenarios/optim/update_sensitivity.h"
#include "training/comparison_policy.h"
#include "training/exact_reference.h"

namespace ddpbench::training {

namespace {

// Rank 0's parameters and optimizer state to every rank. Buffers stay each rank's own: DDP's
// broadcast before the forward must bring rank 0's (the `buffers` fault and the
// ranks_buffers_equal check depend on it). Inside Join that broadcast comes from the highest
// rank still training (Note [PyTorch's Join, as it runs]), so every rank takes the reference's
// buffers too, and the `buffers` fault goes unseen there.
void broadcast_state(comm::Communicator& comm, modes::TrainingState& s,
                     const torch::nn::Module& module, bool in_join) {
  modes::ranks::broadcast_parameter_states(comm, 0, module.parameters(), s.optimizer_state,
                                           s.parameters);
  if (in_join && !s.buffers.empty()) comm::broadcast_coalesced(comm, s.buffers, 0);
}

}  // namespace

LockstepDriver::LockstepDriver(const PhaseInputs& in, modes::ModeKind mode,
                               const torch::nn::Module& judged, comm::Communicator* comm)
    : in_(in), mode_(mode), comm_(comm) {
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

std::vector<double> update_errors(const torch::nn::Module& got, const torch::nn::Module& reference,
                                  const std::vector<at::Tensor>& start, double limit,
                                  torch::optim::Optimizer* reference_optimizer) {
  const auto ref_params = reference.named_parameters();
  const auto params = got.named_parameters();
  // Note [Gradients at rounding level] (compare/tensor_diff.h): the updates' own level, and the
  // elements whose reference gradient was at the gradients' level left out.
  double largest_update = 0.0;
  double largest_gradient = 0.0;
  for (size_t i = 0; i < ref_params.size(); ++i) {
    const at::Tensor& p = ref_params[i].value();
    largest_update = std::max(largest_update, compare::update_max_abs(p, start[i]));
    if (p.grad().defined()) {
      largest_gradient = std::max(largest_gradient, compare::gradient_max_abs(p.grad(), false));
    }
  }
  const at::ScalarType dtype =
      ref_params.is_empty() ? at::kFloat : ref_params[0].value().scalar_type();
  const compare::RoundingLevel floor = compare::rounding_level(largest_update, dtype, limit);
  const double gradient_level = compare::rounding_level(largest_gradient, dtype, 1.0).level;
  std::vector<double> errors;
  for (size_t i = 0; i < params.size(); ++i) {
    // Both started the step from start[i]: their updates are what differs.
    const at::Tensor& grad = ref_params[i].value().grad();
    const at::Tensor compared =
        grad.defined() ? grad.detach().abs().ge(gradient_level) : at::Tensor();
    // The gradient is known to within the level (Note [Updates of adaptive optimizers]).
    at::Tensor allowance;
    if (reference_optimizer != nullptr) {
      allowance = scenarios::update_sensitivity(*reference_optimizer, ref_params[i].value(), grad,
                                                start[i]);
      if (allowance.defined()) allowance = allowance * gradient_level;
    }
    errors.push_back(compare::normalized_update_error(params[i].value(), ref_params[i].value(),
                                                      start[i], floor, compared, allowance));
  }
  return errors;
}

void LockstepDriver::record(int64_t step, const torch::nn::Module& module) {
  if (!reference_) return;
  torch::nn::Module& ref = reference_->loop().module();
  const auto params = module.named_parameters();
  const std::vector<double> errors = update_errors(module, ref, start_parameters_, gradient_limit_,
                                                   &reference_->loop().optimizer());
  for (size_t i = 0; i < params.size(); ++i) {
    diffs_.push_back({step, params[i].key(), reports::Stage::kUpdates, errors[i], errors[i], 0});
  }
  const auto ref_buffers = ref.named_buffers();
  const auto buffers = module.named_buffers();
  for (size_t i = 0; i < buffers.size(); ++i) {
    const compare::TensorDiff d =
        compare::diff_tensors(buffers[i].value(), ref_buffers[i].value(), tolerance_);
    diffs_.push_back({step, buffers[i].key(), reports::Stage::kBuffers, d.max_abs, d.max_rel,
                      d.violations, d.max_ratio, d.ref_max_abs});
  }
}

void LockstepDriver::check_optimizer_state(int64_t step, const torch::nn::Module& module,
                                           torch::optim::Optimizer& optimizer) {
  // The reference's state after `step` (rank 0 ran it in before_step), on every rank.
  modes::TrainingState state = reference_
                                   ? modes::capture_training_state(reference_->loop().module(),
                                                                   reference_->loop().optimizer())
                                   : modes::capture_training_state(module, optimizer);
  if (comm_ != nullptr) broadcast_state(*comm_, state, module, in_.setup.in_join);
  std::set<const void*> held;
  for (const auto& group : optimizer.param_groups()) {
    for (const at::Tensor& p : group.params()) held.insert(p.unsafeGetTensorImpl());
  }
  const auto params = module.named_parameters();
  std::vector<std::string> entries;
  for (const std::string& name : scenarios::state_names()) {
    if (scenarios::shaped_like_parameter(name)) entries.push_back(name);
  }
  // Per entry kind, the floor its errors are judged above (Note [Gradients at rounding level]).
  std::vector<compare::RoundingLevel> floors;
  for (const std::string& e : entries) {
    double largest = 0.0;
    for (const auto& ref : state.optimizer_state) {
      const auto it = ref.find(e);
      if (it != ref.end())
        largest = std::max(largest, compare::gradient_max_abs(it->second, false));
    }
    const at::ScalarType dtype = params.is_empty() ? at::kFloat : params[0].value().scalar_type();
    floors.push_back(compare::rounding_level(largest, dtype, gradient_limit_));
  }
  // errors[i][e]: -1 where neither holds the entry (or this rank does not hold the parameter).
  const auto n = static_cast<int64_t>(params.size() * entries.size());
  at::Tensor errors = at::full({n}, -1.0, at::kDouble);
  for (size_t i = 0; i < params.size(); ++i) {
    if (held.count(params[i].value().unsafeGetTensorImpl()) == 0) continue;
    const scenarios::ParameterState mine = scenarios::parameter_state(optimizer, params[i].value());
    const scenarios::ParameterState& ref = state.optimizer_state[i];
    for (size_t e = 0; e < entries.size(); ++e) {
      const auto a = mine.find(entries[e]);
      const auto b = ref.find(entries[e]);
      if (a == mine.end() && b == ref.end()) continue;
      const double err =
          a == mine.end() || b == ref.end()
              ? INFINITY
              : compare::normalized_gradient_error(a->second.cpu(), b->second, false, floors[e]);
      errors[static_cast<int64_t>(i * entries.size() + e)].fill_(std::isnan(err) ? INFINITY : err);
    }
  }
  const std::vector<at::Tensor> all =
      comm_ != nullptr ? comm_->allgather(errors) : std::vector<at::Tensor>{errors};
  if (!reference_) return;
  std::vector<at::Tensor> host;
  for (const at::Tensor& t : all) host.push_back(t.cpu().contiguous());
  for (int64_t k = 0; k < n; ++k) {
    double worst = -1.0;
    int64_t rank = 0;
    for (size_t r = 0; r < host.size(); ++r) {
      const double v = host[r].data_ptr<double>()[k];
      if (v > worst) {
        worst = v;
        rank = static_cast<int64_t>(r);
      }
    }
    if (worst < 0) continue;
    const size_t i = static_cast<size_t>(k) / entries.size();
    const std::string tensor =
        fmt::format("{}[{}]{}", params[i].key(), entries[static_cast<size_t>(k) % entries.size()],
                    all.size() > 1 ? fmt::format(" (rank {})", rank) : "");
    diffs_.push_back({step, tensor, reports::Stage::kOptimizerState, worst, worst, 0});
  }
}

void LockstepDriver::after_step(int64_t step, const torch::nn::Module& module,
                                torch::optim::Optimizer& optimizer) {
  // Sharded optimizer state is zero's to get wrong; the other modes' state is the reference's,
  // loaded before the step, and the updates judge what their optimizer made of it.
  if (mode_ == modes::ModeKind::kZero) check_optimizer_state(step, module, optimizer);
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
  if (comm_ != nullptr) broadcast_state(*comm_, state, module, in_.setup.in_join);
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

// lockstep.cpp — see lockstep.h.
#include "training/lockstep.h"

#include <torch/torch.h>

#include "compare/tensor_diff.h"
#include "modes/common/step_loop.h"
#include "modes/common/training_state.h"
#include "modes/single/single_path.h"
#include "training/comparison_policy.h"
#include "training/exact_reference.h"

namespace ddpbench::training {

// The exact reference, one step at a time, on its own fresh model (same initial weights).
struct LockstepDriver::Reference {
  Reference(const PhaseInputs& in, const modes::single::ReferenceRule& rule)
      : instance(scenarios::instantiate_model(*in.setup.spec, in.setup.request, in.dataset)),
        path(modes::single::make_single_path(*in.setup.spec, instance, in.context, rule)),
        inputs{*in.setup.spec, *in.dataset, in.plan, in.context},
        loop(*path, inputs, options(in.setup)) {}

  static modes::TrainOptions options(const RunSetup& setup) {
    modes::TrainOptions o;
    o.checking = false;  // the reference's own records come from its free-running check phase
    o.first_step = setup.first_step();  // --resume: from the checkpoint, as the judged mode
    o.start_state = setup.start_state();
    return o;
  }

  scenarios::ScenarioInstance instance;
  std::unique_ptr<modes::GradientPath> path;
  modes::TrainInputs inputs;
  modes::StepLoop loop;
};

namespace {

// Rank 0's parameters and momentum to every rank: a momentum flag first, then every tensor in
// place. Buffers stay each rank's own: DDP's broadcast before the forward must bring rank 0's
// (the `buffers` fault and the ranks_buffers_equal check depend on it).
void broadcast_state(comm::Communicator& comm, modes::TrainingState& s,
                     const torch::nn::Module& module) {
  at::Tensor has_momentum = at::tensor({s.momentum.empty() ? int64_t{0} : int64_t{1}});
  comm.broadcast({has_momentum}, 0);
  if (has_momentum.item<int64_t>() != 0 && s.momentum.empty()) {
    for (const auto& p : module.parameters()) {
      s.momentum.push_back(at::zeros(p.sizes(), p.options().device(at::kCPU)));  // host, as s is
    }
  }
  if (has_momentum.item<int64_t>() == 0) s.momentum.clear();
  std::vector<at::Tensor> all = s.parameters;
  all.insert(all.end(), s.momentum.begin(), s.momentum.end());
  comm.broadcast(all, 0);
}

}  // namespace

LockstepDriver::LockstepDriver(const PhaseInputs& in, modes::ModeKind mode,
                               const torch::nn::Module& judged, comm::Communicator* comm)
    : in_(in), comm_(comm) {
  tolerance_ = comparison_policy(in.setup, mode, "full").state;
  if (comm_ == nullptr || comm_->rank() == 0) {
    reference_ = std::make_unique<Reference>(in, exact_reference_for(in.setup, mode, judged).rule);
  }
}

LockstepDriver::~LockstepDriver() = default;

void LockstepDriver::record(int64_t step, const torch::nn::Module& module) {
  if (!reference_) return;
  torch::nn::Module& ref = reference_->loop.module();
  const auto ref_params = ref.named_parameters();
  const auto params = module.named_parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    // Both started the step from start_parameters_: their updates are what differs.
    const double err = compare::normalized_update_error(params[i].value(), ref_params[i].value(),
                                                        start_parameters_[i]);
    diffs_.push_back({step, params[i].key(), false, err, err, 0});
  }
  const auto ref_buffers = ref.named_buffers();
  const auto buffers = module.named_buffers();
  for (size_t i = 0; i < buffers.size(); ++i) {
    const compare::TensorDiff d =
        compare::diff_tensors(buffers[i].value(), ref_buffers[i].value(), tolerance_);
    diffs_.push_back({step, buffers[i].key(), true, d.max_abs, d.max_rel, d.violations});
  }
}

void LockstepDriver::before_step(int64_t step, torch::nn::Module& module,
                                 torch::optim::Optimizer& optimizer) {
  if (steps_done_ > 0) record(step - 1, module);  // not before the first (--resume: step > 0)
  modes::TrainingState state;
  if (reference_) {
    state = modes::capture_training_state(reference_->loop.module(), reference_->loop.optimizer());
  } else {
    // Shapes to receive into, and this rank's own buffers (kept).
    state = modes::capture_training_state(module, optimizer);
  }
  if (comm_ != nullptr) broadcast_state(*comm_, state, module);
  modes::load_training_state(module, optimizer, state);
  if (reference_) {
    start_parameters_ = std::move(state.parameters);
    reference_->loop.run_step(step);
  }
  steps_done_ = step + 1;
}

std::vector<compare::StateDiff> LockstepDriver::finish(const torch::nn::Module& module) {
  if (steps_done_ > 0) record(steps_done_ - 1, module);
  return std::move(diffs_);
}

}  // namespace ddpbench::training

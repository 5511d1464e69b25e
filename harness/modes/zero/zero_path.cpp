// zero_path.cpp — see zero_path.h.
#include "modes/zero/zero_path.h"

#include <fmt/format.h>
#include <torch/torch.h>
#include <unistd.h>

#include <limits>
#include <stdexcept>

#include "comm/broadcast_coalesced.h"
#include "errors.h"
#include "modes/common/trained_parameters.h"
#include "modes/sync_bn/sync_batch_norm.h"
#include "modes/zero/consolidated_state.h"
#include "modes/zero/sharded_optimizer.h"
#include "modes/zero/stage1_allreduce.h"
#include "modes/zero/stage2_reduce_scatter.h"
#include "modes/zero/stage3_dim0_shards.h"
#include "scenarios/optim/grad_scaler.h"
#include "scenarios/optim/optimizer_state.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes::zero {
namespace {

// The model placed, rank 0's parameters and buffers on every rank (as DDP's constructor makes
// them), and what trains partitioned over the ranks; a frozen parameter stays whole on every
// rank, as in DDP.
ZeroShared share(torch::nn::Module& module, comm::Communicator& comm, HsdpMesh& mesh,
                 const runtime::ExecutionContext& context) {
  context.place_model(module);
  TrainedParameters trained = trained_parameters(module);
  {
    torch::NoGradGuard no_grad;
    comm::broadcast_coalesced(comm, module.parameters(), 0);
    const std::vector<at::Tensor> buffers = module.buffers();
    if (!buffers.empty()) comm::broadcast_coalesced(comm, buffers, 0);
  }
  ZeroPartition partition = partition_of(trained.tensors, mesh.shard().world_size());
  const size_t count = trained.tensors.size();
  const DivideFactors divide = hsdp_divide_factors(
      comm.world_size(), mesh.replicas() != nullptr ? mesh.shard().world_size() : 0,
      trained.tensors.empty() ? at::kFloat : trained.tensors.front().scalar_type());
  return ZeroShared{module,
                    comm,
                    mesh,
                    divide,
                    std::move(trained.tensors),
                    std::move(trained.names),
                    std::move(partition),
                    UsedParameters(count)};
}

std::unique_ptr<ZeroStage> make_stage(ZeroShared& shared, const ZeroPathOptions& options) {
  switch (options.stage) {
    case 1:
      return std::make_unique<Stage1Allreduce>(shared, options.bucket_bytes);
    case 2:
      return std::make_unique<Stage2ReduceScatter>(shared, options.bucket_bytes);
    case 3:
      return std::make_unique<Stage3Dim0Shards>(
          shared, fault_on_rank(options.fault, FaultKind::kGather, shared.comm.rank()),
          options.bucket_bytes);
    default:
      throw std::logic_error(fmt::format("zero stage {} is not built", options.stage));
  }
}

}  // namespace

ZeroPath::ZeroPath(const scenarios::ScenarioSpec& spec, scenarios::ScenarioInstance& instance,
                   comm::Communicator& comm, const runtime::ExecutionContext& context,
                   ZeroPathOptions options)
    : spec_(spec),
      model_(instance.model),
      options_(std::move(options)),
      mesh_(std::make_unique<HsdpMesh>(comm, options_.shard_group)),
      shared_(share(*model_.ptr(), comm, *mesh_, context)),
      draws_(std::make_unique<ForwardDraws>(module())),
      stage_(make_stage(shared_, options_)) {
  if (options_.sync_bn) {
    sync_bn_control_ = std::make_shared<sync_bn::SyncBnControl>();
    sync_bn::convert_sync_batchnorm(module(), comm, sync_bn_control_);
  }
}

ZeroPath::~ZeroPath() = default;

std::string ZeroPath::who() const { return fmt::format("rank {}", shared_.comm.rank()); }

std::vector<std::vector<int64_t>> ZeroPath::step_shards(const data::EpochPlan& epoch,
                                                        int64_t step_in_epoch) const {
  std::vector<int64_t> mine = epoch.local_batch(step_in_epoch, shared_.comm.rank());
  // Out of batches: this rank has joined (forward_loss); run/fit_checks.cpp refuses it at stage 3.
  if (mine.empty()) return {};
  return {std::move(mine)};
}

int64_t ZeroPath::fault_parameter() const {
  const FaultSpec& f = *options_.fault;
  if (f.kind != FaultKind::kGrad) return stage_->first_owned_parameter();
  for (size_t i = 0; i < shared_.names.size() && !f.tensor.empty(); ++i) {
    if (shared_.names[i] == f.tensor) return static_cast<int64_t>(i);
  }
  return 0;
}

GradientFaults ZeroPath::gradient_faults(int64_t step) const {
  GradientFaults faults;
  const int rank = shared_.comm.rank();
  if (fault_fires(options_.fault, FaultKind::kGrad, rank, step)) {
    faults.grad_parameter = fault_parameter();
    faults.eps = options_.fault->eps;
  }
  faults.overflow_first = fault_fires(options_.fault, FaultKind::kInf, rank, step);
  return faults;
}

at::Tensor ZeroPath::forward_loss(const std::vector<data::Batch>& shards, int64_t step) {
  current_step_ = step;
  shared_.faults = gradient_faults(step);
  shared_.hsdp_faults = {fault_fires_everywhere(options_.fault, FaultKind::kReplica, step),
                         fault_fires_everywhere(options_.fault, FaultKind::kDivide, step)};
  const int rank = shared_.comm.rank();
  const std::optional<FaultSpec>& fault = options_.fault;
  if (fault_fires(fault, FaultKind::kCrash, rank, step)) {
    throw WorkerFailure(fmt::format("rank {}: injected crash at step {}", rank, step));
  }
  if (fault_fires(fault, FaultKind::kHang, rank, step)) {
    for (;;) pause();  // only the launcher's timeout can end this
  }
  // syncbn fault: from its step on, this rank normalises with local statistics only.
  if (sync_bn_control_)
    sync_bn_control_->skip_exchange = fault_active(fault, FaultKind::kSyncBn, rank, step);
  {
    // DDP's broadcast_buffers: every forward starts from rank 0's buffers.
    torch::NoGradGuard no_grad;
    const std::vector<at::Tensor> buffers = module().buffers();
    if (!buffers.empty()) comm::broadcast_coalesced(shared_.comm, buffers, 0);
  }
  const bool gathers = stage_->before_forward(fault_fires(fault, FaultKind::kGather, rank, step));
  // Note [A joined zero rank]: out of batches (uneven data), a rank runs no forward and no
  // backward and reduces zero gradients, as DDP's joined rank does under PyTorch's Join (the
  // average over the initial world size); it still joins every collective of the step (the
  // buffer broadcast above, the reduction, the owners' broadcasts after the step), as
  // ZeroRedundancyOptimizer's join hook does. What it steps its shards with is the stage's: at
  // stage 1, PyTorch's, the gradients its last trained step left (step_optimizer; Note
  // [PyTorch's Join, as it runs]); at stages 2 and 3, ddpbench's own, the reduced average. The
  // join fault trains on its last batch again.
  const data::Batch* taken = batch_.take(shards, fault_fires(fault, FaultKind::kJoin, rank, step));
  if (taken == nullptr) {
    stage_->after_forward();
    return at::zeros({}, module().parameters().front().options());  // 0 samples: weighs nothing
  }
  const data::Batch& batch = *taken;
  at::Tensor loss = scenarios::compute_loss(
      spec_, draws_->forward(model_, batch.inputs, step, rank), batch.targets);
  stage_->after_forward();
  // Stage 3: the parameters this forward gathered (its units' all-gathers ran during it).
  if (gathers && options_.checking) {
    forward_digests_ = ranks::state_digests(module(), &digest_names_);
  }
  if (fault_fires(fault, FaultKind::kNan, rank, step)) {
    loss = loss * std::numeric_limits<double>::quiet_NaN();
  }
  return loss;
}

void ZeroPath::backward(const at::Tensor& loss) {
  if (batch_.joined()) {
    // Nothing computed, nothing used: the reduction sends zeros (Note [A joined zero rank]).
    for (at::Tensor& p : shared_.params) p.mutable_grad().reset();
    return;
  }
  if (shared_.sync) stage_->before_backward();
  loss.backward();
}

void ZeroPath::reduce_gradients() {
  if (!shared_.sync) return;  // no_sync: the micro-step's gradients accumulate locally
  torch::NoGradGuard no_grad;
  stage_->reduce();
}

std::unique_ptr<torch::optim::Optimizer> ZeroPath::make_optimizer(
    const scenarios::OptimizerSpec& spec) {
  std::vector<at::Tensor> parameters = stage_->optimizer_parameters();
  std::vector<std::string> names = parameter_names(module(), parameters);
  return scenarios::make_optimizer(spec, std::move(parameters), names);
}

std::unique_ptr<torch::optim::Optimizer> ZeroPath::consolidated_optimizer(
    torch::optim::Optimizer& local, const scenarios::OptimizerSpec& spec) {
  if (stage_->shards_parameters()) return nullptr;
  const std::vector<at::Tensor> model_parameters = module().parameters();
  return consolidate_optimizer(model_parameters, parameter_names(module(), model_parameters),
                               shared_.params, shared_.partition, local, spec,
                               shared_.mesh.shard());
}

void ZeroPath::clip_gradients(double max_norm) { stage_->clip(max_norm); }

void ZeroPath::step_optimizer(torch::optim::Optimizer& optimizer) {
  torch::NoGradGuard no_grad;
  if (options_.stage == 1 && options_.in_join) {
    // DDP's join hook reduces zeros and drops the result, and ZeroRedundancyOptimizer's calls
    // step() on what .grad still holds: the gradients the rank's last trained step left there
    // (Note [PyTorch's Join, as it runs]). Stages 2 and 3 are not PyTorch's: a joined rank steps
    // the averaged gradients, as a Join contributing zeros would have it.
    if (batch_.joined()) {
      for (size_t i = 0; i < shared_.params.size() && i < last_gradients_.size(); ++i) {
        shared_.params[i].mutable_grad() = last_gradients_[i];
      }
    } else {
      last_gradients_.clear();
      for (const at::Tensor& p : shared_.params) {
        last_gradients_.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());
      }
    }
  }
  step_with_faults(optimizer);
  stage_->after_step(
      fault_fires(options_.fault, FaultKind::kGather, shared_.comm.rank(), current_step_));
}

void ZeroPath::step_with_faults(torch::optim::Optimizer& optimizer) {
  const int rank = shared_.comm.rank();
  const std::optional<FaultSpec>& fault = options_.fault;
  at::Tensor unstepped;  // owner fault: the parameter's value before the step
  const bool owner_fault = fault_fires(fault, FaultKind::kOwner, rank, current_step_);
  const int64_t faulty = owner_fault || fault_fires(fault, FaultKind::kShard, rank, current_step_)
                             ? fault_parameter()
                             : -1;
  if (owner_fault && faulty >= 0) unstepped = shared_.params[static_cast<size_t>(faulty)].clone();
  optimizer.step();
  const int64_t state_faulty =
      fault_fires(fault, FaultKind::kState, rank, current_step_) ? fault_parameter() : -1;
  if (state_faulty >= 0) {
    // A wrong or stale shard of the optimizer state: what the next step would start from.
    for (auto& [name, t] :
         scenarios::parameter_state(optimizer, shared_.params[static_cast<size_t>(state_faulty)])) {
      if (scenarios::shaped_like_parameter(name)) t.mul_(1.0 + fault->eps);
    }
  }
  if (faulty >= 0) {
    at::Tensor& p = shared_.params[static_cast<size_t>(faulty)];
    if (owner_fault) {
      p.copy_(unstepped);
    } else {
      p.mul_(1.0 + fault->eps);
    }
  }
}

std::vector<at::Tensor> ZeroPath::gradients_to_record() {
  return in_model_order(stage_->recorded_gradients());
}

std::vector<at::Tensor> ZeroPath::in_model_order(std::vector<at::Tensor> trained) const {
  std::vector<at::Tensor> out;
  size_t next = 0;  // shared_.params keeps the model's order
  for (const at::Tensor& p : model_.ptr()->parameters()) {
    const bool trains = next < shared_.params.size() && shared_.params[next].is_same(p);
    out.push_back(trains ? std::move(trained[next++]) : at::Tensor());
  }
  return out;
}

double ZeroPath::finish_checked_step(int64_t step, double local_loss, int64_t samples) {
  const double loss = ranks::global_mean_loss(shared_.comm, local_loss, samples);
  if (stage_->shards_parameters()) {
    // Stage 3: the shards cannot differ across ranks, but what each forward gathered from them can.
    ranks::note_disagreement(shared_.comm, forward_digests_, digest_names_, step, disagreement_);
    return loss;
  }
  // After the owners' broadcasts every rank must hold the same parameters, bit for bit.
  std::vector<std::string> names;
  const at::Tensor digests = ranks::state_digests(module(), &names);
  ranks::note_disagreement(shared_.comm, digests, names, step, disagreement_);
  return loss;
}

void ZeroPath::agree_on_overflow(scenarios::GradScaler& scaler) {
  if (stage_->holds_every_gradient()) return;
  scaler.agree_on_overflow(
      [this](at::Tensor& flag) { comm::allreduce_sum_blocking(shared_.comm, flag); });
}

void ZeroPath::gather_state(torch::optim::Optimizer& optimizer) { stage_->gather_state(optimizer); }

void ZeroPath::release_state(torch::optim::Optimizer& optimizer) {
  stage_->release_state(optimizer);
}

}  // namespace ddpbench::modes::zero

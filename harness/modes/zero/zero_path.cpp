// zero_path.cpp — see zero_path.h.
#include "modes/zero/zero_path.h"

#include <fmt/format.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "comm/broadcast_coalesced.h"
#include "errors.h"
#include "modes/common/trained_parameters.h"
#include "modes/zero/consolidated_state.h"
#include "modes/zero/sharded_optimizer.h"
#include "scenarios/optim/clip_grad_norm.h"
#include "scenarios/optim/grad_scaler.h"
#include "scenarios/optim/optimizer_state.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes::zero {
namespace {

// The inf fault: an overflow in this rank's first gradient, before the reduction carries it to
// whoever holds that element (at stages 2 and 3 its owner alone).
void overflow(const at::Tensor& gradient) {
  if (gradient.numel() > 0) gradient.view(-1)[0].fill_(std::numeric_limits<double>::infinity());
}

// A parameter's gradient, made zeros where backward left none (a parameter the step did not
// reach still takes part in the reduction, as in DDP with find_unused_parameters).
at::Tensor& gradient_of(at::Tensor& parameter) {
  at::Tensor& g = parameter.mutable_grad();
  if (!g.defined()) g = at::zeros_like(parameter);
  return g;
}

}  // namespace

ZeroPath::ZeroPath(const scenarios::ScenarioSpec& spec, scenarios::ScenarioInstance& instance,
                   comm::Communicator& comm, const runtime::ExecutionContext& context,
                   ZeroPathOptions options)
    : spec_(spec), model_(instance.model), comm_(comm), options_(std::move(options)) {
  if (options_.stage < 1 || options_.stage > 3) {
    throw std::logic_error(fmt::format("zero stage {} is not built", options_.stage));
  }
  context.place_model(*model_.ptr());
  // What trains is partitioned; a frozen parameter stays whole on every rank, as in DDP.
  TrainedParameters trained = trained_parameters(module());
  params_ = std::move(trained.tensors);
  names_ = std::move(trained.names);
  {
    // Every rank starts from rank 0's model, as DDP's constructor makes it.
    torch::NoGradGuard no_grad;
    comm::broadcast_coalesced(comm_, module().parameters(), 0);
    const std::vector<at::Tensor> buffers = module().buffers();
    if (!buffers.empty()) comm::broadcast_coalesced(comm_, buffers, 0);
  }
  partition_ = partition_of(params_, comm_.world_size());
  used_.assign(params_.size(), 0);
  used_anywhere_.assign(params_.size(), 1);
  draws_ = std::make_unique<ForwardDraws>(module());
  if (options_.stage < 3) packed_ = pack_by_owner(params_, partition_);
  if (options_.stage == 1) make_buckets();
  if (options_.stage == 3) {
    if (fault_on_rank(options_.fault, FaultKind::kGather, comm_.rank())) {
      for (const at::Tensor& p : params_) previous_forward_.push_back(p.detach().clone());
    }
    shards_ = std::make_unique<Dim0Shards>(params_, comm_);
  }
}

ZeroPath::~ZeroPath() {
  for (size_t i = 0; i < hook_keys_.size(); ++i)
    grad_accumulators_[i]->del_post_hook(hook_keys_[i]);
}

void ZeroPath::make_buckets() {
  // DDP's bucket_cap_mb (25 MiB). With the gradients as views of the buckets (no copy in or out),
  // measured on cifar_resnet18 at 2 ranks over gloo: backward 121-124 ms against 145-155 with
  // 4 MiB buckets, whose eleven allreduces competed with backward for the cores.
  constexpr int64_t kBucketBytes = int64_t{25} << 20;
  bucket_of_.assign(params_.size(), -1);
  slots_.assign(params_.size(), at::Tensor());
  arrived_.assign(params_.size(), 0);
  int64_t bytes = 0;  // in the last bucket
  for (auto i = static_cast<int64_t>(params_.size()) - 1; i >= 0; --i) {
    const at::Tensor& p = params_[static_cast<size_t>(i)];
    const int64_t size = p.numel() * static_cast<int64_t>(p.element_size());
    if (buckets_.empty() || (bytes > 0 && bytes + size > kBucketBytes)) {
      buckets_.emplace_back();
      bytes = 0;
    }
    bucket_of_[static_cast<size_t>(i)] = static_cast<int64_t>(buckets_.size()) - 1;
    buckets_.back().params.push_back(i);
    bytes += size;
  }
  for (Bucket& b : buckets_) {
    int64_t numel = 0;
    for (const int64_t i : b.params) numel += params_[static_cast<size_t>(i)].numel();
    b.flat = at::zeros({numel}, params_.front().options());
    int64_t offset = 0;
    for (const int64_t i : b.params) {
      const at::Tensor& p = params_[static_cast<size_t>(i)];
      slots_[static_cast<size_t>(i)] = b.flat.narrow(0, offset, p.numel()).view(p.sizes());
      offset += p.numel();
    }
    b.pending = static_cast<int64_t>(b.params.size());
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    // A post hook on the parameter's AccumulateGrad runs once backward's gradient is in .grad,
    // which is the slot: final for this backward.
    grad_accumulators_.push_back(torch::autograd::impl::grad_accumulator(params_[i]));
    if (!grad_accumulators_.back()) {
      throw std::invalid_argument(
          fmt::format("zero: parameter '{}' does not require grad", names_[i]));
    }
    const auto index = static_cast<int64_t>(i);
    hook_keys_.push_back(grad_accumulators_.back()->add_post_hook(
        std::make_unique<torch::autograd::utils::LambdaPostHook>(
            [this, index](const torch::autograd::variable_list& outputs,
                          const torch::autograd::variable_list& /*inputs*/) {
              if (sync_ && in_backward_ && arrived_[static_cast<size_t>(index)] == 0) {
                used_[static_cast<size_t>(index)] = 1;
                slot_ready(index);
                launch_ready_buckets();
              }
              return outputs;
            })));
  }
}

void ZeroPath::bind_gradient_slots() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& p = params_[i];
    const at::Tensor& grad = p.grad();
    const at::Tensor& slot = slots_[i];
    used_[i] = grad.defined() ? 1 : 0;  // what no_sync's micro-steps accumulated counts as used
    if (grad.defined() && grad.is_alias_of(slot) && grad.data_ptr() == slot.data_ptr() &&
        grad.strides() == slot.strides()) {
      continue;
    }
    if (grad.defined()) {
      slots_[i].copy_(grad);
    } else {
      slots_[i].zero_();  // not reached this step: reduced as zeros, as DDP's unused parameters
    }
    p.mutable_grad() = slot;
  }
  in_backward_ = true;
}

void ZeroPath::slot_ready(int64_t index) {
  if (fault_fires(options_.fault, FaultKind::kGrad, comm_.rank(), current_step_) &&
      index == fault_parameter()) {
    torch::NoGradGuard no_grad;
    slots_[static_cast<size_t>(index)].mul_(1.0 + options_.fault->eps);
  }
  if (index == 0 && fault_fires(options_.fault, FaultKind::kInf, comm_.rank(), current_step_)) {
    overflow(slots_.front());
  }
  arrived_[static_cast<size_t>(index)] = 1;
  --buckets_[static_cast<size_t>(bucket_of_[static_cast<size_t>(index)])].pending;
}

void ZeroPath::launch_ready_buckets() {
  // In bucket order on every rank, whatever order the gradients arrive in: the collectives of all
  // ranks must pair up.
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    Bucket& b = buckets_[next_launch_++];
    // Scaled by 1/K before the sum, as DDP's reducer and PyTorch's allreduce hook do.
    torch::NoGradGuard no_grad;
    b.flat.mul_(1.0 / comm_.world_size());
    b.work = comm_.allreduce_sum(b.flat);
  }
}

std::string ZeroPath::who() const { return fmt::format("rank {}", comm_.rank()); }

std::vector<std::vector<int64_t>> ZeroPath::step_shards(const data::EpochPlan& epoch,
                                                        int64_t step_in_epoch) const {
  std::vector<int64_t> mine = epoch.local_batch(step_in_epoch, comm_.rank());
  // run/prepare_run.cpp refuses plans where a rank runs out of batches under zero.
  if (mine.empty()) throw std::logic_error("zero: a rank ran out of batches");
  return {std::move(mine)};
}

int64_t ZeroPath::fault_parameter() const {
  const FaultSpec& f = *options_.fault;
  if (f.kind == FaultKind::kGrad && !f.tensor.empty()) {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == f.tensor) return static_cast<int64_t>(i);
    }
  }
  if (f.kind == FaultKind::kGrad) return 0;
  if (shards_) {
    // Stage 3: the first parameter with rows in this (the faulty) rank's shards.
    for (size_t i = 0; i < params_.size(); ++i) {
      if (shards_->holds_rows(static_cast<int64_t>(i))) return static_cast<int64_t>(i);
    }
    return -1;
  }
  const std::vector<int64_t>& mine = partition_.rank_params[static_cast<size_t>(f.rank)];
  return mine.empty() ? -1 : mine.front();
}

at::Tensor ZeroPath::forward_loss(const std::vector<data::Batch>& shards, int64_t step) {
  current_step_ = step;
  const int rank = comm_.rank();
  const std::optional<FaultSpec>& fault = options_.fault;
  if (fault_fires(fault, FaultKind::kCrash, rank, step)) {
    throw WorkerFailure(fmt::format("rank {}: injected crash at step {}", rank, step));
  }
  if (fault_fires(fault, FaultKind::kHang, rank, step)) {
    for (;;) pause();  // only the launcher's timeout can end this
  }
  {
    // DDP's broadcast_buffers: every forward starts from rank 0's buffers.
    torch::NoGradGuard no_grad;
    const std::vector<at::Tensor> buffers = module().buffers();
    if (!buffers.empty()) comm::broadcast_coalesced(comm_, buffers, 0);
  }
  if (shards_) gather_for_forward(step);
  const data::Batch& batch = shards.front();
  at::Tensor loss = scenarios::compute_loss(
      spec_.loss, draws_->forward(model_, batch.inputs, step, rank), batch.targets);
  if (fault_fires(fault, FaultKind::kNan, rank, step)) {
    loss = loss * std::numeric_limits<double>::quiet_NaN();
  }
  return loss;
}

void ZeroPath::gather_for_forward(int64_t step) {
  if (shards_->gathered()) return;  // a no_sync micro-step's: still whole
  // The step loop's zero_grad left the shards' gradients None (torch 2) or zeroed in place
  // (libtorch 1.13, whose zeroed gradient still counts as one): the same, at full size.
  std::vector<char> zeroed(params_.size(), 0);
  for (size_t i = 0; i < params_.size(); ++i) {
    zeroed[i] = params_[i].grad().defined() ? 1 : 0;
    params_[i].mutable_grad().reset();
  }
  const bool stale = fault_fires(options_.fault, FaultKind::kGather, comm_.rank(), step);
  shards_->gather(stale ? &previous_forward_ : nullptr);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (zeroed[i] != 0) params_[i].mutable_grad() = at::zeros_like(params_[i]);
  }
  if (!previous_forward_.empty()) {
    for (size_t i = 0; i < params_.size(); ++i) previous_forward_[i] = params_[i].detach().clone();
  }
  if (options_.checking) forward_digests_ = ranks::state_digests(module(), &digest_names_);
}

void ZeroPath::backward(const at::Tensor& loss) {
  if (options_.stage == 1 && sync_) bind_gradient_slots();
  loss.backward();
}

void ZeroPath::reduce_gradients() {
  if (!sync_) return;  // no_sync: the micro-step's gradients accumulate locally
  torch::NoGradGuard no_grad;
  if (options_.stage == 1) {
    allreduce_gradients();  // the grad fault acts in the bucket (slot_ready)
    return;
  }
  if (fault_fires(options_.fault, FaultKind::kGrad, comm_.rank(), current_step_)) {
    gradient_of(params_[static_cast<size_t>(fault_parameter())]).mul_(1.0 + options_.fault->eps);
  }
  if (fault_fires(options_.fault, FaultKind::kInf, comm_.rank(), current_step_)) {
    overflow(gradient_of(params_.front()));
  }
  if (shards_) {
    reduce_scatter_shards();
  } else {
    reduce_scatter_gradients();
  }
}

void ZeroPath::reduce_scatter_shards() {
  std::vector<at::Tensor> full;
  for (size_t i = 0; i < params_.size(); ++i) {
    used_[i] = params_[i].grad().defined() ? 1 : 0;
    full.push_back(params_[i].grad());
  }
  at::Tensor map;
  const std::shared_ptr<comm::Work> used = start_used_map(map);
  // Scaled by 1/K before the sum, as the other stages and DDP average.
  std::vector<at::Tensor> mine = shards_->reduce_scatter(full, 1.0 / comm_.world_size());
  used->wait();
  finish_used_map(map);
  full.clear();
  for (at::Tensor& p : params_) p.mutable_grad().reset();
  shards_->release();  // the full parameters and gradients are gone; the shards remain
  for (size_t i = 0; i < params_.size(); ++i) {
    // No rank used it: None, as single-device's (and the optimizer skips it).
    if (used_anywhere_[i] != 0) params_[i].mutable_grad() = mine[i];
  }
  bytes_per_step_ = comm_.world_size() * shards_->shard_bytes();
}

void ZeroPath::allreduce_gradients() {
  if (!in_backward_) bind_gradient_slots();  // no backward since the last step: every slot as is
  // Parameters backward did not reach, and buckets it did not finish, go now.
  for (size_t i = 0; i < params_.size(); ++i) {
    if (arrived_[i] == 0) slot_ready(static_cast<int64_t>(i));
  }
  launch_ready_buckets();
  at::Tensor map;
  const std::shared_ptr<comm::Work> used = start_used_map(map);
  bytes_per_step_ = 0;
  for (Bucket& b : buckets_) {
    b.work->wait();
    b.work.reset();
    b.pending = static_cast<int64_t>(b.params.size());
    bytes_per_step_ += b.flat.numel() * static_cast<int64_t>(b.flat.element_size());
  }
  used->wait();
  finish_used_map(map);
  // The averages are in the slots, which are the gradients.
  for (size_t i = 0; i < params_.size(); ++i) {
    if (used_anywhere_[i] == 0) params_[i].mutable_grad().reset();  // None, as single-device's
  }
  next_launch_ = 0;
  std::fill(arrived_.begin(), arrived_.end(), 0);
  in_backward_ = false;
}

std::shared_ptr<comm::Work> ZeroPath::start_used_map(at::Tensor& map) {
  map = at::zeros({static_cast<int64_t>(used_.size())}, at::kFloat);
  float* m = map.data_ptr<float>();
  for (size_t i = 0; i < used_.size(); ++i) m[i] = used_[i] != 0 ? 1.0F : 0.0F;
  map = map.to(params_.front().device());
  return comm_.allreduce_sum(map);
}

void ZeroPath::finish_used_map(const at::Tensor& map) {
  const at::Tensor host = map.cpu();
  const float* m = host.data_ptr<float>();
  for (size_t i = 0; i < used_anywhere_.size(); ++i) used_anywhere_[i] = m[i] > 0 ? 1 : 0;
}

void ZeroPath::reduce_scatter_gradients() {
  // Block r of the input holds rank r's parameters' gradients in its optimizer's order, padded
  // to the largest rank's elements; rank r keeps block r of the sum.
  const int world = comm_.world_size();
  for (size_t i = 0; i < params_.size(); ++i) used_[i] = params_[i].grad().defined() ? 1 : 0;
  at::Tensor map;
  const std::shared_ptr<comm::Work> used = start_used_map(map);
  int64_t block = 1;
  for (const int64_t n : partition_.rank_numel) block = std::max(block, n);
  at::Tensor input = at::zeros({world * block}, params_.front().options());
  for (int r = 0; r < world; ++r) {
    int64_t offset = r * block;
    for (const int64_t i : partition_.rank_params[static_cast<size_t>(r)]) {
      const at::Tensor& g = gradient_of(params_[static_cast<size_t>(i)]);
      input.narrow(0, offset, g.numel()).copy_(g.reshape(-1));
      offset += g.numel();
    }
  }
  input.mul_(1.0 / world);
  used->wait();
  finish_used_map(map);
  const at::Tensor mine = comm_.reduce_scatter_sum(input);
  int64_t offset = 0;
  for (const int64_t i : partition_.rank_params[static_cast<size_t>(comm_.rank())]) {
    at::Tensor& g = params_[static_cast<size_t>(i)].mutable_grad();
    const int64_t n = params_[static_cast<size_t>(i)].numel();
    if (used_anywhere_[static_cast<size_t>(i)] == 0) {
      g.reset();  // no rank used it: None, as single-device's
    } else {
      g.copy_(mine.narrow(0, offset, n).view_as(g));
    }
    offset += n;
  }
  // The others' gradients are theirs now: freed, as ZeRO-2 frees them.
  for (size_t i = 0; i < params_.size(); ++i) {
    if (partition_.owner[i] != comm_.rank()) params_[i].mutable_grad().reset();
  }
  bytes_per_step_ = input.numel() * static_cast<int64_t>(input.element_size());
}

std::unique_ptr<torch::optim::Optimizer> ZeroPath::make_optimizer(
    const scenarios::OptimizerSpec& spec) {
  // Stage 3: over every parameter, each of which holds only this rank's shard when it steps.
  if (shards_) return scenarios::make_optimizer(spec, params_);
  return scenarios::make_optimizer(spec, owned_parameters(params_, partition_, comm_.rank()));
}

std::unique_ptr<torch::optim::Optimizer> ZeroPath::consolidated_optimizer(
    torch::optim::Optimizer& local, const scenarios::OptimizerSpec& spec) {
  if (shards_) return nullptr;
  return consolidate_optimizer(module().parameters(), params_, partition_, local, spec, comm_);
}

void ZeroPath::clip_gradients(double max_norm) {
  if (options_.stage == 1) {
    // Every rank holds every averaged gradient: clip_grad_norm_ on the whole model, as after DDP.
    GradientPath::clip_gradients(max_norm);
    return;
  }
  if (shards_) {
    clip_shards(max_norm);
    return;
  }
  torch::NoGradGuard no_grad;
  // Each parameter's norm from its owner, zeros elsewhere: the sum over ranks is exact, so the
  // norm of these norms is clip_grad_norm_'s on the whole model, bit for bit.
  at::Tensor norms = at::zeros({static_cast<int64_t>(params_.size())}, params_.front().options());
  std::vector<at::Tensor> mine;
  for (const int64_t i : partition_.rank_params[static_cast<size_t>(comm_.rank())]) {
    const at::Tensor& g = params_[static_cast<size_t>(i)].grad();
    if (!g.defined()) continue;
    norms[i].copy_(g.norm(2));
    mine.push_back(g);
  }
  comm::allreduce_sum_blocking(comm_, norms);
  const at::Tensor coefficient = scenarios::clip_coefficient(norms.norm(2), max_norm);
  for (at::Tensor& g : mine) g.mul_(coefficient);
}

void ZeroPath::clip_shards(double max_norm) {
  torch::NoGradGuard no_grad;
  at::Tensor squares = at::zeros({static_cast<int64_t>(params_.size())}, params_.front().options());
  for (size_t i = 0; i < params_.size(); ++i) {
    const at::Tensor& g = params_[i].grad();
    if (g.defined()) squares[static_cast<int64_t>(i)].copy_(g.pow(2).sum());
  }
  comm::allreduce_sum_blocking(comm_, squares);
  const at::Tensor coefficient = scenarios::clip_coefficient(squares.sqrt().norm(2), max_norm);
  for (at::Tensor& p : params_) {
    if (p.grad().defined()) p.mutable_grad().mul_(coefficient);
  }
}

void ZeroPath::step_optimizer(torch::optim::Optimizer& optimizer) {
  const int rank = comm_.rank();
  const std::optional<FaultSpec>& fault = options_.fault;
  torch::NoGradGuard no_grad;
  at::Tensor unstepped;  // owner fault: the parameter's value before the step
  const bool owner_fault = fault_fires(fault, FaultKind::kOwner, rank, current_step_);
  const int64_t faulty = owner_fault || fault_fires(fault, FaultKind::kShard, rank, current_step_)
                             ? fault_parameter()
                             : -1;
  if (owner_fault && faulty >= 0) unstepped = params_[static_cast<size_t>(faulty)].clone();
  optimizer.step();
  const int64_t state_faulty =
      fault_fires(fault, FaultKind::kState, rank, current_step_) ? fault_parameter() : -1;
  if (state_faulty >= 0) {
    // A wrong or stale shard of the optimizer state: what the next step would start from.
    for (auto& [name, t] :
         scenarios::parameter_state(optimizer, params_[static_cast<size_t>(state_faulty)])) {
      if (scenarios::shaped_like_parameter(name)) t.mul_(1.0 + fault->eps);
    }
  }
  if (faulty >= 0) {
    at::Tensor& p = params_[static_cast<size_t>(faulty)];
    if (owner_fault) {
      p.copy_(unstepped);
    } else {
      p.mul_(1.0 + fault->eps);
    }
  }
  if (shards_) return;            // stage 3 broadcasts nothing: the next forward gathers the shards
  std::vector<at::Tensor> stale;  // gather fault: the others' parameters before the broadcasts
  const bool gather_fault = fault_fires(fault, FaultKind::kGather, rank, current_step_);
  if (gather_fault) {
    for (size_t i = 0; i < params_.size(); ++i) {
      stale.push_back(partition_.owner[i] == rank ? at::Tensor() : params_[i].clone());
    }
  }
  broadcast_from_owners(params_, partition_, comm_, packed_);
  for (size_t i = 0; i < stale.size(); ++i) {
    if (stale[i].defined()) params_[i].copy_(stale[i]);
  }
}

std::vector<at::Tensor> ZeroPath::gradients_to_record() {
  if (options_.stage == 1) return GradientPath::gradients_to_record();
  if (shards_) {
    // Stage 3: every rank holds rows of every gradient; one all-gather (untimed).
    std::vector<at::Tensor> mine;
    for (const at::Tensor& p : params_) mine.push_back(p.grad());
    std::vector<at::Tensor> grads = shards_->gather_full(mine);
    for (size_t i = 0; i < grads.size(); ++i) {
      if (used_anywhere_[i] == 0) grads[i] = at::Tensor();
    }
    return in_model_order(std::move(grads));
  }
  // Stage 2: each gradient lives on its owner only; gathered for the record (checked steps only,
  // outside the timed phases), one broadcast per owner.
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> grads(params_.size());
  for (int owner = 0; owner < comm_.world_size(); ++owner) {
    std::vector<at::Tensor> theirs;
    for (const int64_t i : partition_.rank_params[static_cast<size_t>(owner)]) {
      if (used_anywhere_[static_cast<size_t>(i)] == 0) continue;  // None on every rank
      const at::Tensor& own = params_[static_cast<size_t>(i)].grad();
      at::Tensor g = owner == comm_.rank() && own.defined()
                         ? own.clone()
                         : at::zeros_like(params_[static_cast<size_t>(i)]);
      grads[static_cast<size_t>(i)] = g;
      theirs.push_back(g);
    }
    if (!theirs.empty()) comm_.broadcast(theirs, owner);
  }
  return in_model_order(std::move(grads));
}

std::vector<at::Tensor> ZeroPath::in_model_order(std::vector<at::Tensor> trained) const {
  std::vector<at::Tensor> out;
  size_t next = 0;  // params_ keeps the model's order
  for (const at::Tensor& p : model_.ptr()->parameters()) {
    const bool trains = next < params_.size() && params_[next].is_same(p);
    out.push_back(trains ? std::move(trained[next++]) : at::Tensor());
  }
  return out;
}

double ZeroPath::finish_checked_step(int64_t step, double local_loss, int64_t samples) {
  const double loss = ranks::global_mean_loss(comm_, local_loss, samples);
  // After the owners' broadcasts every rank must hold the same parameters, bit for bit.
  if (shards_) {
    // Stage 3: the shards cannot differ across ranks, but what each forward gathered from them can.
    ranks::note_disagreement(comm_, forward_digests_, digest_names_, step, disagreement_);
    return loss;
  }
  std::vector<std::string> names;
  const at::Tensor digests = ranks::state_digests(module(), &names);
  ranks::note_disagreement(comm_, digests, names, step, disagreement_);
  return loss;
}

void ZeroPath::agree_on_overflow(scenarios::GradScaler& scaler) {
  if (options_.stage == 1) return;  // every rank holds every averaged gradient
  scaler.agree_on_overflow([this](at::Tensor& flag) { comm::allreduce_sum_blocking(comm_, flag); });
}

void ZeroPath::gather_state(torch::optim::Optimizer& optimizer) {
  if (!shards_ || shards_->gathered()) return;
  torch::NoGradGuard no_grad;
  stashed_gradients_.clear();
  for (at::Tensor& p : params_) {
    stashed_gradients_.push_back(p.grad());
    p.mutable_grad().reset();
  }
  shards_->gather();
  // The optimizer's shard-shaped state entries, whole. Every rank steps a shard of every parameter
  // some rank has a gradient for, so an entry exists on all ranks or on none.
  std::vector<scenarios::ParameterState> states;
  for (const at::Tensor& p : params_) states.push_back(scenarios::parameter_state(optimizer, p));
  for (const std::string& name : scenarios::state_names()) {
    if (!scenarios::shaped_like_parameter(name)) continue;
    std::vector<at::Tensor> entries;
    bool any = false;
    for (const scenarios::ParameterState& st : states) {
      const auto it = st.find(name);
      entries.push_back(it == st.end() ? at::Tensor() : it->second);
      any = any || it != st.end();
    }
    if (!any) continue;
    const std::vector<at::Tensor> whole = shards_->gather_full(entries);
    for (size_t i = 0; i < states.size(); ++i) {
      if (entries[i].defined()) states[i][name] = whole[i];
    }
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    scenarios::set_parameter_state(optimizer, params_[i], states[i]);
  }
}

void ZeroPath::release_state(torch::optim::Optimizer& optimizer) {
  if (!shards_ || !shards_->gathered()) return;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    scenarios::ParameterState st = scenarios::parameter_state(optimizer, params_[i]);
    for (auto& [name, t] : st) {
      if (scenarios::shaped_like_parameter(name)) t = shards_->chunk_of(static_cast<int64_t>(i), t);
    }
    scenarios::set_parameter_state(optimizer, params_[i], st);
  }
  shards_->recut();
  for (size_t i = 0; i < stashed_gradients_.size(); ++i) {
    params_[i].mutable_grad() = stashed_gradients_[i];
  }
  stashed_gradients_.clear();
}

}  // namespace ddpbench::modes::zero

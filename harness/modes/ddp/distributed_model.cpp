// distributed_model.cpp — see distributed_model.h.
#include "modes/ddp/distributed_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in ranges.h since fmt 11)
#include <torch/torch.h>

#include "comm/broadcast_coalesced.h"
#include "errors.h"
#include "modes/common/trained_parameters.h"
#include "modes/ddp/c10d_engine.h"

namespace ddpbench::modes::ddp {

const char* ddp_impl_name(DdpImpl impl) {
  switch (impl) {
    case DdpImpl::kBucketed:
      return "bucketed";
    case DdpImpl::kNaive:
      return "naive";
    case DdpImpl::kC10d:
      return "c10d";
  }
  return "?";
}

DdpImpl parse_ddp_impl(const std::string& name) {
  std::vector<std::string> known;
  for (const DdpImpl impl : kDdpImpls) {
    if (name == ddp_impl_name(impl)) return impl;
    known.emplace_back(ddp_impl_name(impl));
  }
  throw InputError(
      fmt::format("unknown --ddp-impl '{}': known engines are {}", name, fmt::join(known, ", ")));
}

DistributedModel::DistributedModel(torch::nn::AnyModule module, comm::Communicator& comm,
                                   DdpOptions options)
    : module_(std::move(module)), comm_(comm), options_(std::move(options)) {
  TrainedParameters trained = trained_parameters(*module_.ptr());
  names_ = std::move(trained.names);
  params_ = std::move(trained.tensors);
  // run/resume.cpp refuses a layout that does not fit before any rank starts; this guards the
  // engines' bucket allocation whatever hands them one.
  if (!options_.resume_buckets.empty()) {
    check_bucket_layout(options_.resume_buckets, static_cast<int64_t>(params_.size()));
  }
  if (options_.impl == DdpImpl::kC10d) {
    // PyTorch's own constructor: verification, state broadcast, buckets, Reducer.
    C10dEngineOptions o;
    o.limits = options_.reducer.limits;
    o.comm_hook = options_.reducer.comm_hook;
    o.find_unused_parameters = options_.reducer.find_unused_parameters;
    o.gradient_as_bucket_view = options_.gradient_as_bucket_view;
    o.static_graph = options_.static_graph;
    o.broadcast_buffers = options_.broadcast_buffers;
    o.initial_buckets = options_.resume_buckets;
    o.bucket_fault = options_.bucket_fault;
    c10d_ = std::make_unique<C10dEngine>(*module_.ptr(), comm_, o);
    return;
  }
  {
    // Every rank starts from rank 0's weights, as DDP's constructor does; in-place writes to
    // leaves that require grad are only allowed without grad tracking.
    torch::NoGradGuard no_grad;
    // Frozen parameters too, as DDP's _sync_module_states sends every parameter.
    std::vector<at::Tensor> state = module_.ptr()->parameters();
    for (const auto& b : module_.ptr()->buffers()) state.push_back(b);
    comm::broadcast_coalesced(comm_, state, 0);
  }
  if (options_.impl == DdpImpl::kBucketed) {
    reducer_ = std::make_unique<Reducer>(names_, params_, comm_, options_.reducer);
    if (!options_.resume_buckets.empty()) reducer_->adopt_buckets(options_.resume_buckets);
  }
}

DistributedModel::~DistributedModel() = default;

void DistributedModel::sync_buffers(std::vector<at::Tensor>& buffers) {
  torch::NoGradGuard no_grad;
  auto broadcast = [this](std::vector<at::Tensor>& tensors) {
    if (c10d_) {
      c10d_->broadcast_from(tensors, buffer_source_);
    } else {
      comm::broadcast_coalesced(comm_, tensors, buffer_source_);
    }
  };
  if (keep_own_buffers_) {
    std::vector<at::Tensor> lost;
    for (const auto& b : buffers) lost.push_back(b.clone());
    broadcast(lost);  // every rank must join the collective
  } else {
    broadcast(buffers);
  }
  // Device-side copies (no host synchronisation); digested only after checked steps.
  buffers_at_forward_.clear();
  if (record_buffers_) {
    for (const auto& b : buffers) buffers_at_forward_.push_back(b.detach().clone());
  }
}

at::Tensor DistributedModel::forward(const at::Tensor& input) {
  if (c10d_) {
    c10d_->before_forward(sync_, [this](std::vector<at::Tensor>& b) { sync_buffers(b); });
    at::Tensor output = module_.forward(input);
    c10d_->after_forward(output, sync_);
    return output;
  }
  if (options_.broadcast_buffers && sync_) {
    auto buffers = module_.ptr()->buffers();
    if (!buffers.empty()) sync_buffers(buffers);
  }
  if (reducer_) {
    if (torch::GradMode::is_enabled()) reducer_->prepare_for_forward();
    reducer_->prepare_for_backward();
  }
  return module_.forward(input);
}

at::Tensor DistributedModel::evaluation_forward(const at::Tensor& input, bool first) {
  if (c10d_) {
    // Python DDP's forward under no_grad: the engine syncs the buffers while
    // require_forward_param_sync still holds from the last training forward, i.e. on the first.
    c10d_->before_forward(true,
                          [this](std::vector<at::Tensor>& b) { c10d_->broadcast_from(b, 0); });
    at::Tensor output = module_.forward(input);
    c10d_->after_forward(output, true);
    return output;
  }
  if (first && options_.broadcast_buffers) {
    auto buffers = module_.ptr()->buffers();
    if (!buffers.empty()) comm::broadcast_coalesced(comm_, buffers, 0);
  }
  return module_.forward(input);
}

void DistributedModel::reduce_gradients() {
  // c10d's Reducer finalized the reduction itself at the end of backward (a queued autograd
  // callback): .grad holds the average already.
  if (c10d_) return;
  if (reducer_) {
    reducer_->finalize();
    return;
  }
  if (!sync_) return;
  reduce_naive(false);
}

std::vector<bool> DistributedModel::naive_used_anywhere(bool joined) {
  std::vector<bool> out(params_.size(), true);
  if (!options_.reducer.find_unused_parameters) return out;
  // A joined rank ran no backward: it uses nothing, whatever its .grad holds from before.
  std::vector<float> used(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    used[i] = !joined && params_[i].grad().defined() ? 1.0F : 0.0F;
  }
  // Reduced where the gradients are (NCCL wants device memory), read on the host.
  at::Tensor sum = at::tensor(used, at::kFloat).to(params_.front().device());
  comm::allreduce_sum_blocking(comm_, sum);
  sum = sum.to(at::kCPU);
  const auto* flags = sum.data_ptr<float>();
  for (size_t i = 0; i < params_.size(); ++i) out[i] = flags[i] != 0.0F;
  return out;
}

void DistributedModel::reduce_naive(bool joined) {
  naive_bytes_ = 0;
  torch::NoGradGuard no_grad;
  // With find_unused_parameters, a parameter no rank computed a gradient for keeps .grad None
  // and is not reduced (every rank skips it alike), as PyTorch's DDP and the bucketed Reducer
  // leave it; one used on some ranks only is averaged over the world with zeros from the others.
  // Zero-filling it everywhere instead would let the optimizer's weight decay and momentum move
  // a parameter that single-device training leaves alone.
  const std::vector<bool> used_anywhere = naive_used_anywhere(joined);
  size_t last = params_.size();  // the last parameter reduced (the bucket fault skips it)
  naive_allreduces_ = options_.reducer.find_unused_parameters ? 1 : 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (used_anywhere[i]) {
      last = i;
      ++naive_allreduces_;
    }
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& slot = params_[i].mutable_grad();
    if (!used_anywhere[i]) {
      if (joined && slot.defined()) slot.zero_();  // a joined rank contributes nothing
      continue;
    }
    if (joined && slot.defined()) {
      slot.zero_();
    } else if (!slot.defined()) {
      if (!joined && !options_.reducer.find_unused_parameters) {
        throw WorkerFailure("rank " + std::to_string(comm_.rank()) + ": DDP (naive): parameter " +
                            names_[i] + " received no gradient; run with --find-unused-parameters");
      }
      slot = torch::zeros_like(params_[i]);
    }
    at::Tensor g = slot;
    if (naive_tap_) naive_tap_(static_cast<int64_t>(i), g);
    if (!(skip_last_naive_ && i == last)) comm::allreduce_sum_blocking(comm_, g);
    g.div_(comm_.world_size());  // sum first, then average: the textbook order
    naive_bytes_ += g.numel() * g.element_size();
  }
}

std::optional<int64_t> DistributedModel::allreduces_per_reduction() const {
  if (reducer_) return reducer_->allreduces_per_reduction();
  if (c10d_) return c10d_->allreduces_per_reduction();
  return naive_allreduces_;
}

void DistributedModel::skip_last_reduction(bool skip) {
  if (reducer_) reducer_->skip_last_bucket(skip);
  if (c10d_) c10d_->skip_last_bucket(skip);
  skip_last_naive_ = skip;
}

void DistributedModel::set_sync(bool sync) {
  sync_ = sync;
  if (reducer_) reducer_->set_sync(sync);
}

void DistributedModel::sync_buffers_as_joined() {
  if (c10d_) {
    c10d_->sync_buffers_as_joined([this](std::vector<at::Tensor>& b) { sync_buffers(b); });
    return;
  }
  if (!options_.broadcast_buffers || !sync_) return;
  auto buffers = module_.ptr()->buffers();
  if (!buffers.empty()) sync_buffers(buffers);
}

void DistributedModel::reduce_gradients_joined() {
  if (c10d_) {
    if (sync_) c10d_->reduce_as_joined();  // Note [A joined c10d rank] (c10d_engine.h)
    return;
  }
  if (reducer_) {
    reducer_->reduce_as_joined();
    return;
  }
  if (!sync_) return;
  reduce_naive(true);  // the naive allreduce of each (zero) gradient, divided by the world size
}

DistributedModel::NoSync::NoSync(DistributedModel& m) : model_(m) { model_.set_sync(false); }

DistributedModel::NoSync::~NoSync() { model_.set_sync(true); }

void DistributedModel::set_gradient_tap(GradientTap tap) {
  if (c10d_) {
    c10d_->set_gradient_tap(std::move(tap));
  } else if (reducer_) {
    reducer_->set_gradient_tap(std::move(tap));
  } else {
    naive_tap_ = std::move(tap);
  }
}

int64_t DistributedModel::num_buckets() const {
  if (c10d_) return c10d_->num_buckets();
  return reducer_ ? static_cast<int64_t>(reducer_->buckets().size()) : 0;
}

void DistributedModel::settle_buckets() {
  if (c10d_) {
    c10d_->settle_buckets();
  } else if (reducer_ && torch::GradMode::is_enabled()) {
    reducer_->prepare_for_forward();
  }
}

std::vector<std::vector<int64_t>> DistributedModel::bucket_layout() const {
  if (c10d_) return c10d_->bucket_layout();
  return reducer_ ? reducer_->buckets() : std::vector<std::vector<int64_t>>{};
}

int64_t DistributedModel::bytes_last_step() const {
  if (c10d_) {
    // What the Reducer's allreduces carried: its buckets, halved by a 16-bit compression hook.
    const int64_t bytes = c10d_->bucket_bytes();
    return options_.reducer.comm_hook == CommHookKind::kAllreduce ? bytes : bytes / 2;
  }
  return reducer_ ? reducer_->bytes_last_step() : naive_bytes_;
}

}  // namespace ddpbench::modes::ddp

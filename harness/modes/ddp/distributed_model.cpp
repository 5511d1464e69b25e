// distributed_model.cpp — see distributed_model.h.
#include "modes/ddp/distributed_model.h"

#include <torch/torch.h>

#include "comm/broadcast_coalesced.h"
#include "errors.h"

namespace ddpbench::modes::ddp {

DistributedModel::DistributedModel(torch::nn::AnyModule module, comm::Communicator& comm,
                                   DdpOptions options)
    : module_(std::move(module)), comm_(comm), options_(std::move(options)) {
  for (const auto& p : module_.ptr()->named_parameters()) {
    names_.push_back(p.key());
    params_.push_back(p.value());
  }
  {
    // Every rank starts from rank 0's weights, as DDP's constructor does; in-place writes to
    // leaves that require grad are only allowed without grad tracking.
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor> state = params_;
    for (const auto& b : module_.ptr()->buffers()) state.push_back(b);
    comm::broadcast_coalesced(comm_, state, 0);
  }
  if (options_.impl == DdpImpl::kBucketed) {
    reducer_ = std::make_unique<Reducer>(names_, params_, comm_, options_.reducer);
  }
}

at::Tensor DistributedModel::forward(const at::Tensor& input) {
  if (options_.broadcast_buffers && sync_) {
    auto buffers = module_.ptr()->buffers();
    if (!buffers.empty()) {
      torch::NoGradGuard no_grad;
      if (keep_own_buffers_) {
        std::vector<at::Tensor> lost;
        for (const auto& b : buffers) lost.push_back(b.clone());
        comm::broadcast_coalesced(comm_, lost, 0);  // every rank must join the collective
      } else {
        comm::broadcast_coalesced(comm_, buffers, 0);
      }
      // Device-side copies (no host synchronisation); digested only after checked steps.
      buffers_at_forward_.clear();
      if (record_buffers_) {
        for (const auto& b : buffers) buffers_at_forward_.push_back(b.detach().clone());
      }
    }
  }
  if (reducer_) reducer_->prepare_for_backward();
  return module_.forward(input);
}

at::Tensor DistributedModel::evaluation_forward(const at::Tensor& input, bool first) {
  if (first && options_.broadcast_buffers) {
    auto buffers = module_.ptr()->buffers();
    if (!buffers.empty()) comm::broadcast_coalesced(comm_, buffers, 0);
  }
  return module_.forward(input);
}

void DistributedModel::reduce_gradients() {
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
    comm::allreduce_sum_blocking(comm_, g);
    g.div_(comm_.world_size());  // sum first, then average: the textbook order
    naive_bytes_ += g.numel() * g.element_size();
  }
}

void DistributedModel::set_sync(bool sync) {
  sync_ = sync;
  if (reducer_) reducer_->set_sync(sync);
}

void DistributedModel::reduce_gradients_joined() {
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
  if (reducer_) {
    reducer_->set_gradient_tap(std::move(tap));
  } else {
    naive_tap_ = std::move(tap);
  }
}

int64_t DistributedModel::bytes_last_step() const {
  return reducer_ ? reducer_->bytes_last_step() : naive_bytes_;
}

}  // namespace ddpbench::modes::ddp

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
  naive_bytes_ = 0;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor g = params_[i].mutable_grad();
    if (!g.defined()) {
      if (!options_.reducer.find_unused_parameters) {
        throw WorkerFailure("rank " + std::to_string(comm_.rank()) + ": DDP (naive): parameter " +
                            names_[i] + " received no gradient; run with --find-unused-parameters");
      }
      g = params_[i].mutable_grad() = torch::zeros_like(params_[i]);
    }
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
  torch::NoGradGuard no_grad;
  for (at::Tensor& p : params_) {
    at::Tensor& g = p.mutable_grad();
    if (g.defined()) {
      g.zero_();
    } else {
      g = torch::zeros_like(p);
    }
  }
  reduce_gradients();  // the naive allreduce of each (zero) gradient, divided by the world size
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

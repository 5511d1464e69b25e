// naive_engine.cpp — see naive_engine.h.
#include "modes/ddp/naive_engine.h"

#include <torch/torch.h>

#include "errors.h"

namespace ddpbench::modes::ddp {

NaiveEngine::NaiveEngine(torch::nn::Module& module, const std::vector<std::string>& names,
                         const std::vector<at::Tensor>& params, comm::Communicator& comm,
                         const DdpOptions& options)
    : OwnEngine(module, comm, options), names_(names), params_(params) {}

void NaiveEngine::reduce(bool sync) {
  if (sync) reduce_each(false);
}

void NaiveEngine::reduce_as_joined(bool sync) {
  // The naive allreduce of each (zero) gradient, divided by the world size.
  if (sync) reduce_each(true);
}

std::vector<bool> NaiveEngine::used_anywhere(bool joined) {
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

void NaiveEngine::reduce_each(bool joined) {
  bytes_ = 0;
  torch::NoGradGuard no_grad;
  // With find_unused_parameters, a parameter no rank computed a gradient for keeps .grad None
  // and is not reduced (every rank skips it alike), as PyTorch's DDP and the bucketed Reducer
  // leave it; one used on some ranks only is averaged over the world with zeros from the others.
  // Zero-filling it everywhere instead would let the optimizer's weight decay and momentum move
  // a parameter that single-device training leaves alone.
  const std::vector<bool> used = used_anywhere(joined);
  size_t last = params_.size();  // the last parameter reduced (the bucket fault skips it)
  allreduces_ = options_.reducer.find_unused_parameters ? 1 : 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (used[i]) {
      last = i;
      ++allreduces_;
    }
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& slot = params_[i].mutable_grad();
    if (!used[i]) {
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
    if (tap_) tap_(static_cast<int64_t>(i), g);
    if (!(skip_last_ && i == last)) comm::allreduce_sum_blocking(comm_, g);
    g.div_(comm_.world_size());  // sum first, then average: the textbook order
    bytes_ += g.numel() * g.element_size();
  }
}

}  // namespace ddpbench::modes::ddp

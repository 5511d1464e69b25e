// reducer.cpp — see reducer.h.
#include "modes/ddp/reducer.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in ranges.h since fmt 11)
#include <torch/csrc/autograd/variable.h>

namespace ddpbench::modes::ddp {

Reducer::Reducer(std::vector<std::string> names, std::vector<at::Tensor> params,
                 comm::Communicator& comm, ReducerOptions options)
    : names_(std::move(names)), params_(std::move(params)), comm_(comm), options_(options) {
  std::vector<int64_t> bytes;
  for (const auto& p : params_) bytes.push_back(p.numel() * p.element_size());
  bucket_params_ = assign_buckets(bytes, options_.limits);
  slots_.resize(params_.size());
  for (size_t b = 0; b < bucket_params_.size(); ++b) {
    int64_t numel = 0;
    for (int64_t i : bucket_params_[b]) {
      slots_[static_cast<size_t>(i)] = {static_cast<int64_t>(b), numel};
      numel += params_[static_cast<size_t>(i)].numel();
    }
    bucket_buffers_.push_back(
        at::zeros({numel}, params_[static_cast<size_t>(bucket_params_[b][0])].options()));
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto index = static_cast<int64_t>(i);
    // A hook on a leaf sees the gradient flowing into AccumulateGrad; returning an undefined
    // tensor leaves it unchanged, so local accumulation into .grad proceeds as usual.
    hook_handles_.push_back(params_[i].register_hook([this, index](const at::Tensor& grad) {
      on_gradient(index, grad);
      return at::Tensor();
    }));
  }
}

Reducer::~Reducer() {
  for (size_t i = 0; i < params_.size(); ++i) params_[i].remove_hook(hook_handles_[i]);
}

void Reducer::prepare_for_backward() {
  if (!sync_) return;
  in_backward_ = true;
  param_ready_.assign(params_.size(), false);
  param_used_.assign(params_.size(), false);
  bucket_pending_.clear();
  for (const auto& b : bucket_params_) bucket_pending_.push_back(static_cast<int64_t>(b.size()));
  next_bucket_ = 0;
  pending_.clear();
  ready_order_.clear();
  launch_order_.clear();
  launched_in_backward_ = 0;
  bytes_last_step_ = 0;
}

void Reducer::on_gradient(int64_t index, const at::Tensor& grad) {
  if (!sync_ || !in_backward_) return;  // no_sync: gradients only accumulate locally
  const Slot& s = slots_[static_cast<size_t>(index)];
  const at::Tensor& param = params_[static_cast<size_t>(index)];
  at::Tensor slot = bucket_buffers_[static_cast<size_t>(s.bucket)]
                        .narrow(0, s.offset, param.numel())
                        .view(param.sizes());
  slot.copy_(grad);
  // Gradients accumulated under no_sync belong to this reduction too.
  if (param.grad().defined()) slot.add_(param.grad());
  param_used_[static_cast<size_t>(index)] = true;
  ready_order_.push_back(index);
  mark_ready(index);
}

void Reducer::mark_ready(int64_t index) {
  if (param_ready_[static_cast<size_t>(index)]) {
    throw std::runtime_error(
        fmt::format("DDP reducer: gradient of '{}' arrived twice in one backward",
                    names_[static_cast<size_t>(index)]));
  }
  param_ready_[static_cast<size_t>(index)] = true;
  const Slot& s = slots_[static_cast<size_t>(index)];
  if (tap_) {
    const at::Tensor& param = params_[static_cast<size_t>(index)];
    at::Tensor slot = bucket_buffers_[static_cast<size_t>(s.bucket)]
                          .narrow(0, s.offset, param.numel())
                          .view(param.sizes());
    tap_(index, slot);
  }
  if (--bucket_pending_[static_cast<size_t>(s.bucket)] == 0) launch_ready_buckets();
}

void Reducer::launch_ready_buckets() {
  // Buckets launch strictly in order so every rank issues its collectives in the same order,
  // whatever order its hooks fired in.
  while (next_bucket_ < static_cast<int64_t>(bucket_params_.size()) &&
         bucket_pending_[static_cast<size_t>(next_bucket_)] == 0) {
    pending_.push_back(launch_comm_hook(options_.comm_hook, comm_,
                                        bucket_buffers_[static_cast<size_t>(next_bucket_)]));
    bytes_last_step_ += pending_.back()->bytes();
    launch_order_.push_back(next_bucket_);
    if (in_backward_) ++launched_in_backward_;
    ++next_bucket_;
  }
}

void Reducer::finalize() {
  if (!sync_) return;
  in_backward_ = false;
  std::vector<std::string> missing;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!param_ready_[i]) missing.push_back(names_[i]);
  }
  if (!missing.empty()) {
    if (!options_.find_unused_parameters) {
      throw std::runtime_error(fmt::format(
          "DDP: parameters received no gradient this step: {}; enable --find-unused-parameters "
          "(as with PyTorch's find_unused_parameters=True)",
          fmt::join(missing, ", ")));
    }
    for (size_t i = 0; i < params_.size(); ++i) {
      if (param_ready_[i]) continue;
      const Slot& s = slots_[i];
      bucket_buffers_[static_cast<size_t>(s.bucket)]
          .narrow(0, s.offset, params_[i].numel())
          .zero_();
      mark_ready(static_cast<int64_t>(i));
    }
  }
  // Which parameters got a gradient on ANY rank (PyTorch's local_used_map allreduce): a
  // parameter unused everywhere keeps grad None, as in PyTorch.
  at::Tensor used_anywhere;
  if (options_.find_unused_parameters) {
    std::vector<float> used(params_.size());
    for (size_t i = 0; i < params_.size(); ++i) used[i] = param_used_[i] ? 1.0F : 0.0F;
    // Reduced where the gradients are (NCCL wants device memory), read on the host.
    used_anywhere = at::tensor(used, at::kFloat).to(params_.front().device());
    comm::allreduce_sum_blocking(comm_, used_anywhere);
    used_anywhere = used_anywhere.to(at::kCPU);
  }
  for (auto& p : pending_) p->finish();

  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& param = params_[i];
    if (used_anywhere.defined() && used_anywhere[static_cast<int64_t>(i)].item<float>() == 0.0F)
      continue;
    const Slot& s = slots_[i];
    const at::Tensor averaged = bucket_buffers_[static_cast<size_t>(s.bucket)]
                                    .narrow(0, s.offset, param.numel())
                                    .view(param.sizes());
    if (param.grad().defined()) {
      param.mutable_grad().copy_(averaged);
    } else {
      param.mutable_grad() = averaged.clone();
    }
  }
  pending_.clear();
}

}  // namespace ddpbench::modes::ddp

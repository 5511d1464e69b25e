// reducer.cpp — see reducer.h.
#include "modes/ddp/reducer.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in ranges.h since fmt 11)
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "errors.h"
#include "modes/common/layout_view.h"

namespace ddpbench::modes::ddp {

Reducer::Reducer(std::vector<std::string> names, std::vector<at::Tensor> params,
                 comm::Communicator& comm, ReducerOptions options)
    : names_(std::move(names)), params_(std::move(params)), comm_(comm), options_(options) {
  std::vector<int64_t> bytes;
  for (const auto& p : params_) bytes.push_back(p.numel() * p.element_size());
  allocate_buckets(initial_buckets(bytes, options_.limits, options_.find_unused_parameters));
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto index = static_cast<int64_t>(i);
    // A post hook on the parameter's AccumulateGrad runs once the gradient is in .grad, which is
    // the bucket slot: the slot is then final for this backward.
    grad_accumulators_.push_back(torch::autograd::impl::grad_accumulator(params_[i]));
    if (!grad_accumulators_.back()) {
      throw std::invalid_argument(
          fmt::format("DDP reducer: parameter '{}' does not require grad", names_[i]));
    }
    hook_keys_.push_back(grad_accumulators_.back()->add_post_hook(
        std::make_unique<torch::autograd::utils::LambdaPostHook>(
            [this, index](const torch::autograd::variable_list& outputs,
                          const torch::autograd::variable_list& /*inputs*/) {
              on_gradient_accumulated(index);
              return outputs;
            })));
  }
}

void Reducer::allocate_buckets(std::vector<std::vector<int64_t>> buckets) {
  bucket_params_ = std::move(buckets);
  bucket_buffers_.clear();
  bucket_of_.assign(params_.size(), -1);
  slots_.assign(params_.size(), at::Tensor());
  for (size_t b = 0; b < bucket_params_.size(); ++b) {
    int64_t numel = 0;
    for (int64_t i : bucket_params_[b]) numel += params_[static_cast<size_t>(i)].numel();
    bucket_buffers_.push_back(
        at::zeros({numel}, params_[static_cast<size_t>(bucket_params_[b][0])].options()));
    int64_t offset = 0;
    for (int64_t i : bucket_params_[b]) {
      const at::Tensor& param = params_[static_cast<size_t>(i)];
      bucket_of_[static_cast<size_t>(i)] = static_cast<int64_t>(b);
      // With the parameter's strides (layout_view.h): the gradient keeps its layout.
      slots_[static_cast<size_t>(i)] =
          view_in_layout_of(bucket_buffers_.back().narrow(0, offset, param.numel()), param);
      offset += param.numel();
    }
  }
}

void Reducer::prepare_for_forward() {
  if (rebuilt_ || synced_steps_ == 0 || options_.find_unused_parameters) return;
  rebuilt_ = true;
  // Rank 0's order, as c10d's sync_bucket_indices broadcasts it, so every rank buckets alike.
  std::vector<int64_t> order = ready_order_;
  order.resize(params_.size(), -1);
  at::Tensor shared = at::tensor(order, at::kLong).to(params_.front().device());
  comm_.broadcast({shared}, 0);
  shared = shared.to(at::kCPU);
  order.assign(shared.data_ptr<int64_t>(), shared.data_ptr<int64_t>() + shared.numel());
  if (std::find(order.begin(), order.end(), -1) != order.end()) return;  // rank 0 saw no backward
  std::vector<int64_t> bytes;
  for (const auto& p : params_) bytes.push_back(p.numel() * p.element_size());
  // The .grad tensors keep the old buckets alive and their values; the next synchronised
  // prepare_for_backward copies them into the new slots.
  allocate_buckets(rebuilt_buckets(order, bytes, options_.limits));
}

void Reducer::adopt_buckets(const std::vector<std::vector<int64_t>>& buckets) {
  rebuilt_ = true;
  allocate_buckets(buckets);
}

Reducer::~Reducer() {
  for (size_t i = 0; i < params_.size(); ++i) grad_accumulators_[i]->del_post_hook(hook_keys_[i]);
}

void Reducer::prepare_for_backward() {
  if (!sync_) return;
  in_backward_ = true;
  had_grad_.assign(params_.size(), true);
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& param = params_[i];
    const at::Tensor& grad = param.grad();
    at::Tensor& slot = slots_[i];
    if (grad.defined() && grad.is_alias_of(slot) && grad.data_ptr() == slot.data_ptr() &&
        grad.strides() == slot.strides()) {
      continue;
    }
    // Replaced since the last backward: keep its value (no_sync accumulation belongs to this
    // reduction), or start from zero where it was set to None.
    if (grad.defined()) {
      slot.copy_(grad);
    } else {
      slot.zero_();
      had_grad_[i] = false;
    }
    param.mutable_grad() = slot;
  }
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

void Reducer::on_gradient_accumulated(int64_t index) {
  if (!sync_ || !in_backward_) return;  // no_sync: gradients only accumulate locally
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
  if (tap_) {
    at::Tensor slot = slots_[static_cast<size_t>(index)];  // the tap cannot rebind the view
    tap_(index, slot);
  }
  if (options_.comm_hook == CommHookKind::kAllreduce) {
    // Per Note [PyTorch's reduction arithmetic], scaled by the reciprocal on the way into the sum.
    slots_[static_cast<size_t>(index)].mul_(1.0 / comm_.world_size());
  }
  if (--bucket_pending_[static_cast<size_t>(bucket_of_[static_cast<size_t>(index)])] == 0) {
    launch_ready_buckets();
  }
}

void Reducer::launch_ready_buckets() {
  // Buckets launch strictly in order so every rank issues its collectives in the same order,
  // whatever order its hooks fired in.
  while (next_bucket_ < static_cast<int64_t>(bucket_params_.size()) &&
         bucket_pending_[static_cast<size_t>(next_bucket_)] == 0) {
    const bool skipped =
        skip_last_bucket_ && next_bucket_ + 1 == static_cast<int64_t>(bucket_params_.size());
    pending_.push_back(skipped
                           ? skipped_reduction()
                           : launch_comm_hook(options_.comm_hook, comm_,
                                              bucket_buffers_[static_cast<size_t>(next_bucket_)]));
    bytes_last_step_ += pending_.back()->bytes();
    launch_order_.push_back(next_bucket_);
    if (in_backward_) ++launched_in_backward_;
    ++next_bucket_;
  }
}

void Reducer::reduce_as_joined() {
  prepare_for_forward();  // the others' forwards join a bucket rebuild's broadcast
  if (!sync_) return;
  prepare_for_backward();
  for (auto& bucket : bucket_buffers_) bucket.zero_();
  joined_step_ = true;
  finalize();  // every parameter "missing": marked ready as zeros, buckets launched in order
  joined_step_ = false;
}

void Reducer::finalize() {
  if (!sync_) return;
  in_backward_ = false;
  ++synced_steps_;
  std::vector<std::string> missing;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!param_ready_[i]) missing.push_back(names_[i]);
  }
  if (!missing.empty()) {
    if (!options_.find_unused_parameters && !joined_step_) {
      // A worker failure (exit 3), named: this rank's buckets holding these parameters never
      // launched, so waiting for them would hang; the parent stops every rank.
      throw WorkerFailure(fmt::format(
          "rank {}: DDP: parameters received no gradient in this step's backward: {}; run with "
          "--find-unused-parameters (PyTorch's find_unused_parameters=True), which reduces them "
          "as zeros",
          comm_.rank(), fmt::join(missing, ", ")));
    }
    // An unused parameter's slot holds its .grad as it was (zero, or what no_sync accumulated),
    // which is what PyTorch reduces for it.
    for (size_t i = 0; i < params_.size(); ++i) {
      if (!param_ready_[i]) mark_ready(static_cast<int64_t>(i));
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
  pending_.clear();

  // The slots are the averaged gradients already. A parameter unused on every rank whose .grad
  // was None keeps None, as in PyTorch (its next backward re-attaches the slot).
  if (used_anywhere.defined()) {
    const auto* used_flags = used_anywhere.data_ptr<float>();
    for (size_t i = 0; i < params_.size(); ++i) {
      if (used_flags[i] == 0.0F && !had_grad_[i]) params_[i].mutable_grad() = at::Tensor();
    }
  }
}

}  // namespace ddpbench::modes::ddp

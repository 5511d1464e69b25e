// gradient_buckets.cpp — see gradient_buckets.h.
#include "modes/zero/gradient_buckets.h"

#include <fmt/format.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

namespace ddpbench::modes::zero {

GradientBuckets::GradientBuckets(ZeroShared& shared, const std::vector<int64_t>& block_of,
                                 int64_t blocks, int64_t bucket_bytes, bool release_between_steps,
                                 Launch launch)
    : shared_(shared), release_(release_between_steps), launch_(std::move(launch)) {
  make_buckets(block_of, blocks, bucket_bytes);
  hook_gradient_accumulation();
}

GradientBuckets::~GradientBuckets() {
  for (size_t i = 0; i < hook_keys_.size(); ++i)
    grad_accumulators_[i]->del_post_hook(hook_keys_[i]);
}

void GradientBuckets::make_buckets(const std::vector<int64_t>& block_of, int64_t blocks,
                                   int64_t bucket_bytes) {
  // DDP's bucket_cap_mb (25 MiB by default). With the gradients as views of the buckets (no copy
  // in or out), measured on cifar_resnet18 at 2 ranks over gloo (stage 1): backward 121-124 ms
  // against 145-155 with 4 MiB buckets, whose eleven allreduces competed with backward for the
  // cores.
  const std::vector<at::Tensor>& params = shared_.params;
  block_of_ = block_of;
  blocks_ = blocks;
  bucket_of_.assign(params.size(), -1);
  offset_.assign(params.size(), 0);
  slots_.assign(params.size(), at::Tensor());
  arrived_.assign(params.size(), 0);
  int64_t bytes = 0;  // in the last bucket
  for (auto i = static_cast<int64_t>(params.size()) - 1; i >= 0; --i) {
    const at::Tensor& p = params[static_cast<size_t>(i)];
    const int64_t size = p.numel() * static_cast<int64_t>(p.element_size());
    if (buckets_.empty() || (bytes > 0 && bytes + size > bucket_bytes)) {
      buckets_.emplace_back();
      bytes = 0;
    }
    bucket_of_[static_cast<size_t>(i)] = static_cast<int64_t>(buckets_.size()) - 1;
    buckets_.back().params.push_back(i);
    bytes += size;
  }
  for (Bucket& b : buckets_) {
    // Each block's gradients in the bucket's order; the block is the largest block's size.
    std::vector<int64_t> filled(static_cast<size_t>(blocks), 0);
    for (const int64_t i : b.params) {
      const auto r = static_cast<size_t>(block_of_[static_cast<size_t>(i)]);
      offset_[static_cast<size_t>(i)] = filled[r];
      filled[r] += params[static_cast<size_t>(i)].numel();
    }
    b.block = *std::max_element(filled.begin(), filled.end());
    for (const int64_t i : b.params) {
      offset_[static_cast<size_t>(i)] += block_of_[static_cast<size_t>(i)] * b.block;
    }
    b.flat = at::zeros({blocks * b.block}, params.front().options());
    b.pending = static_cast<int64_t>(b.params.size());
  }
  if (release_) {
    for (Bucket& b : buckets_) b.flat.reset();
  }
}

int64_t GradientBuckets::offset_in_block(int64_t index) const {
  const auto i = static_cast<size_t>(index);
  return offset_[i] - block_of_[i] * buckets_[static_cast<size_t>(bucket_of_[i])].block;
}

void GradientBuckets::hook_gradient_accumulation() {
  for (size_t i = 0; i < shared_.params.size(); ++i) {
    // A post hook on the parameter's AccumulateGrad runs once backward's gradient is in .grad,
    // which is the slot: final for this backward.
    grad_accumulators_.push_back(torch::autograd::impl::grad_accumulator(shared_.params[i]));
    if (!grad_accumulators_.back()) {
      throw std::invalid_argument(
          fmt::format("zero: parameter '{}' does not require grad", shared_.names[i]));
    }
    const auto index = static_cast<int64_t>(i);
    hook_keys_.push_back(grad_accumulators_.back()->add_post_hook(
        std::make_unique<torch::autograd::utils::LambdaPostHook>(
            [this, index](const torch::autograd::variable_list& outputs,
                          const torch::autograd::variable_list& /*inputs*/) {
              if (shared_.sync && in_backward_ && arrived_[static_cast<size_t>(index)] == 0) {
                shared_.used.mark(static_cast<size_t>(index), true);
                slot_ready(index);
                launch_ready_buckets();
              }
              return outputs;
            })));
  }
}

void GradientBuckets::bind() {
  torch::NoGradGuard no_grad;
  for (Bucket& b : buckets_) {
    if (b.flat.defined()) continue;
    // A released bucket comes back zeroed: the padding must sum to nothing (and hold no inf).
    b.flat = at::zeros({blocks_ * b.block}, shared_.params.front().options());
  }
  for (size_t i = 0; i < shared_.params.size(); ++i) {
    at::Tensor& p = shared_.params[i];
    const Bucket& b = buckets_[static_cast<size_t>(bucket_of_[i])];
    if (!slots_[i].defined() || !slots_[i].is_alias_of(b.flat)) {
      slots_[i] = b.flat.narrow(0, offset_[i], p.numel()).view(p.sizes());
    }
    const at::Tensor& grad = p.grad();
    const at::Tensor& slot = slots_[i];
    // What no_sync's micro-steps accumulated counts as used.
    shared_.used.mark(i, grad.defined());
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

void GradientBuckets::slot_ready(int64_t index) {
  {
    torch::NoGradGuard no_grad;
    shared_.faults.apply(index, slots_[static_cast<size_t>(index)]);
  }
  arrived_[static_cast<size_t>(index)] = 1;
  --buckets_[static_cast<size_t>(bucket_of_[static_cast<size_t>(index)])].pending;
}

void GradientBuckets::launch_ready_buckets() {
  // In bucket order on every rank, whatever order the gradients arrive in: the collectives of all
  // ranks must pair up.
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    const size_t index = next_launch_++;
    torch::NoGradGuard no_grad;
    launch_(index, buckets_[index]);
  }
}

void GradientBuckets::finish_backward() {
  if (!in_backward_) bind();  // no backward since the last step: every slot as is
  for (size_t i = 0; i < shared_.params.size(); ++i) {
    if (arrived_[i] == 0) slot_ready(static_cast<int64_t>(i));
  }
  launch_ready_buckets();
}

void GradientBuckets::reset() {
  for (Bucket& b : buckets_) {
    b.pending = static_cast<int64_t>(b.params.size());
    if (release_) b.flat.reset();
  }
  if (release_) {
    for (at::Tensor& slot : slots_) slot.reset();
  }
  next_launch_ = 0;
  std::fill(arrived_.begin(), arrived_.end(), 0);
  in_backward_ = false;
}

}  // namespace ddpbench::modes::zero

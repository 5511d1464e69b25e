// bucket_schedule.cpp — see bucket_schedule.h.
#include "modes/zero/bucket_schedule.h"

#include <fmt/format.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

namespace ddpbench::modes::zero {

BucketSchedule::BucketSchedule(ZeroShared& shared, int64_t bucket_bytes, Ready ready, Launch launch)
    : shared_(shared), ready_(std::move(ready)), launch_(std::move(launch)) {
  // DDP's bucket_cap_mb (25 MiB by default). With stage 1's gradients as views of the buckets,
  // measured on cifar_resnet18 at 2 ranks over gloo: backward 121-124 ms against 145-155 with
  // 4 MiB buckets, whose eleven allreduces competed with backward for the cores.
  const std::vector<at::Tensor>& params = shared_.params;
  bucket_of_.assign(params.size(), -1);
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
    buckets_.back().push_back(i);
    bytes += size;
  }
  for (const std::vector<int64_t>& b : buckets_) {
    pending_.push_back(static_cast<int64_t>(b.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].requires_grad()) {
      throw std::invalid_argument(
          fmt::format("zero: parameter '{}' does not require grad", shared_.names[i]));
    }
  }
}

BucketSchedule::~BucketSchedule() { unhook(); }

void BucketSchedule::arm() {
  if (hook_keys_.empty()) hook_gradient_accumulation();
  armed_ = true;
}

void BucketSchedule::unhook() {
  for (size_t i = 0; i < hook_keys_.size(); ++i) {
    grad_accumulators_[i]->del_post_hook(hook_keys_[i]);
  }
  hook_keys_.clear();
  grad_accumulators_.clear();
}

void BucketSchedule::hook_gradient_accumulation() {
  for (size_t i = 0; i < shared_.params.size(); ++i) {
    // A post hook on the parameter's AccumulateGrad (the forward's graph's, or a new one where the
    // forward did not use it) runs once backward's gradient is in .grad: final for this backward.
    grad_accumulators_.push_back(torch::autograd::impl::grad_accumulator(shared_.params[i]));
    const auto index = static_cast<int64_t>(i);
    hook_keys_.push_back(grad_accumulators_.back()->add_post_hook(
        std::make_unique<torch::autograd::utils::LambdaPostHook>(
            [this, index](const torch::autograd::variable_list& outputs,
                          const torch::autograd::variable_list& /*inputs*/) {
              if (shared_.sync && armed_ && arrived_[static_cast<size_t>(index)] == 0) {
                shared_.used.mark(static_cast<size_t>(index), true);
                arrive(index);
                launch_ready_buckets();
              }
              return outputs;
            })));
  }
}

void BucketSchedule::arrive(int64_t index) {
  {
    torch::NoGradGuard no_grad;
    ready_(index);
  }
  arrived_[static_cast<size_t>(index)] = 1;
  --pending_[static_cast<size_t>(bucket_of_[static_cast<size_t>(index)])];
}

void BucketSchedule::launch_ready_buckets() {
  // In bucket order on every rank, whatever order the gradients arrive in: the collectives of all
  // ranks must pair up.
  while (next_launch_ < buckets_.size() && pending_[next_launch_] == 0) {
    const size_t index = next_launch_++;
    torch::NoGradGuard no_grad;
    launch_(index);
  }
}

void BucketSchedule::finish_backward() {
  armed_ = true;
  for (size_t i = 0; i < shared_.params.size(); ++i) {
    if (arrived_[i] == 0) arrive(static_cast<int64_t>(i));
  }
  launch_ready_buckets();
}

void BucketSchedule::reset() {
  for (size_t b = 0; b < buckets_.size(); ++b) {
    pending_[b] = static_cast<int64_t>(buckets_[b].size());
  }
  next_launch_ = 0;
  std::fill(arrived_.begin(), arrived_.end(), 0);
  armed_ = false;
  unhook();
}

}  // namespace ddpbench::modes::zero

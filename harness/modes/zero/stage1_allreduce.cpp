// stage1_allreduce.cpp — see stage1_allreduce.h.
#include "modes/zero/stage1_allreduce.h"

#include <fmt/format.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

#include "scenarios/optim/clip_grad_norm.h"

namespace ddpbench::modes::zero {

Stage1Allreduce::Stage1Allreduce(ZeroShared& shared) : OwnerStage(shared) {
  make_buckets();
  hook_gradient_accumulation();
}

Stage1Allreduce::~Stage1Allreduce() {
  for (size_t i = 0; i < hook_keys_.size(); ++i)
    grad_accumulators_[i]->del_post_hook(hook_keys_[i]);
}

void Stage1Allreduce::make_buckets() {
  // DDP's bucket_cap_mb (25 MiB). With the gradients as views of the buckets (no copy in or out),
  // measured on cifar_resnet18 at 2 ranks over gloo: backward 121-124 ms against 145-155 with
  // 4 MiB buckets, whose eleven allreduces competed with backward for the cores.
  constexpr int64_t kBucketBytes = int64_t{25} << 20;
  const std::vector<at::Tensor>& params = shared_.params;
  bucket_of_.assign(params.size(), -1);
  slots_.assign(params.size(), at::Tensor());
  arrived_.assign(params.size(), 0);
  int64_t bytes = 0;  // in the last bucket
  for (auto i = static_cast<int64_t>(params.size()) - 1; i >= 0; --i) {
    const at::Tensor& p = params[static_cast<size_t>(i)];
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
    for (const int64_t i : b.params) numel += params[static_cast<size_t>(i)].numel();
    b.flat = at::zeros({numel}, params.front().options());
    int64_t offset = 0;
    for (const int64_t i : b.params) {
      const at::Tensor& p = params[static_cast<size_t>(i)];
      slots_[static_cast<size_t>(i)] = b.flat.narrow(0, offset, p.numel()).view(p.sizes());
      offset += p.numel();
    }
    b.pending = static_cast<int64_t>(b.params.size());
  }
}

void Stage1Allreduce::hook_gradient_accumulation() {
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

void Stage1Allreduce::bind_gradient_slots() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < shared_.params.size(); ++i) {
    at::Tensor& p = shared_.params[i];
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

void Stage1Allreduce::slot_ready(int64_t index) {
  {
    torch::NoGradGuard no_grad;
    shared_.faults.apply(index, slots_[static_cast<size_t>(index)]);
  }
  arrived_[static_cast<size_t>(index)] = 1;
  --buckets_[static_cast<size_t>(bucket_of_[static_cast<size_t>(index)])].pending;
}

void Stage1Allreduce::launch_ready_buckets() {
  // In bucket order on every rank, whatever order the gradients arrive in: the collectives of all
  // ranks must pair up.
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    Bucket& b = buckets_[next_launch_++];
    // Scaled by 1/K before the sum, as DDP's reducer and PyTorch's allreduce hook do.
    torch::NoGradGuard no_grad;
    b.flat.mul_(1.0 / shared_.comm.world_size());
    b.work = shared_.comm.allreduce_sum(b.flat);
  }
}

void Stage1Allreduce::reduce() {
  if (!in_backward_) bind_gradient_slots();  // no backward since the last step: every slot as is
  // Parameters backward did not reach, and buckets it did not finish, go now.
  for (size_t i = 0; i < shared_.params.size(); ++i) {
    if (arrived_[i] == 0) slot_ready(static_cast<int64_t>(i));
  }
  launch_ready_buckets();
  const std::shared_ptr<comm::Work> used =
      shared_.used.start(shared_.comm, shared_.params.front().device());
  shared_.bytes_per_step = 0;
  for (Bucket& b : buckets_) {
    b.work->wait();
    b.work.reset();
    b.pending = static_cast<int64_t>(b.params.size());
    shared_.bytes_per_step += b.flat.numel() * static_cast<int64_t>(b.flat.element_size());
  }
  used->wait();
  shared_.used.finish();
  // The averages are in the slots, which are the gradients.
  for (size_t i = 0; i < shared_.params.size(); ++i) {
    if (!shared_.used.anywhere(i)) shared_.params[i].mutable_grad().reset();  // None, as single's
  }
  next_launch_ = 0;
  std::fill(arrived_.begin(), arrived_.end(), 0);
  in_backward_ = false;
}

void Stage1Allreduce::clip(double max_norm) {
  scenarios::clip_grad_norm(shared_.module.parameters(), max_norm);
}

std::vector<at::Tensor> Stage1Allreduce::recorded_gradients() {
  std::vector<at::Tensor> grads;
  for (const at::Tensor& p : shared_.params) grads.push_back(p.grad());
  return grads;
}

}  // namespace ddpbench::modes::zero

// gradient_buckets.cpp — see gradient_buckets.h.
#include "modes/zero/gradient_buckets.h"

#include <torch/torch.h>

#include <algorithm>

#include "modes/common/layout_view.h"

namespace ddpbench::modes::zero {

GradientBuckets::GradientBuckets(ZeroShared& shared, const std::vector<int64_t>& block_of,
                                 int64_t blocks, int64_t bucket_bytes, bool release_between_steps,
                                 Launch launch)
    : shared_(shared),
      release_(release_between_steps),
      blocks_(blocks),
      block_of_(block_of),
      schedule_(
          shared, bucket_bytes,
          [this](int64_t index) {
            shared_.faults.apply(index, slots_[static_cast<size_t>(index)]);
          },
          [this, launch = std::move(launch)](size_t index) { launch(index, buckets_[index]); }) {
  const std::vector<at::Tensor>& params = shared_.params;
  offset_.assign(params.size(), 0);
  slots_.assign(params.size(), at::Tensor());
  for (const std::vector<int64_t>& members : schedule_.buckets()) {
    Bucket b;
    b.params = members;
    // Each block's gradients in the bucket's order; the block is the largest block's size.
    std::vector<int64_t> filled(static_cast<size_t>(blocks_), 0);
    for (const int64_t i : b.params) {
      const auto r = static_cast<size_t>(block_of_[static_cast<size_t>(i)]);
      offset_[static_cast<size_t>(i)] = filled[r];
      filled[r] += params[static_cast<size_t>(i)].numel();
    }
    b.block = *std::max_element(filled.begin(), filled.end());
    for (const int64_t i : b.params) {
      offset_[static_cast<size_t>(i)] += block_of_[static_cast<size_t>(i)] * b.block;
    }
    for (size_t r = 0; r < filled.size(); ++r) {
      if (filled[r] < b.block) {
        b.padding.emplace_back(static_cast<int64_t>(r) * b.block + filled[r], b.block - filled[r]);
      }
    }
    buckets_.push_back(std::move(b));
  }
}

int64_t GradientBuckets::offset_in_block(int64_t index) const {
  const auto i = static_cast<size_t>(index);
  return offset_[i] -
         block_of_[i] * buckets_[static_cast<size_t>(schedule_.bucket_of(index))].block;
}

void GradientBuckets::bind() {
  torch::NoGradGuard no_grad;
  for (Bucket& b : buckets_) {
    if (b.flat.defined()) continue;
    // Every slot is written below (a gradient or zeros); the padding is zeroed here, since it must
    // sum to nothing (and hold no inf for the overflow check): not the whole bucket, each step.
    b.flat = at::empty({blocks_ * b.block}, shared_.params.front().options());
    for (const auto& [offset, count] : b.padding) b.flat.narrow(0, offset, count).zero_();
  }
  for (size_t i = 0; i < shared_.params.size(); ++i) {
    at::Tensor& p = shared_.params[i];
    const Bucket& b = buckets_[static_cast<size_t>(schedule_.bucket_of(static_cast<int64_t>(i)))];
    if (!slots_[i].defined()) {
      slots_[i] = view_in_layout_of(b.flat.narrow(0, offset_[i], p.numel()), p);
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
  schedule_.arm();
}

void GradientBuckets::finish_backward() {
  if (!schedule_.armed()) bind();  // no backward since the last step: every slot as is
  schedule_.finish_backward();
}

void GradientBuckets::reset() {
  schedule_.reset();
  if (!release_) return;
  for (Bucket& b : buckets_) b.flat.reset();
  for (at::Tensor& slot : slots_) slot.reset();
}

}  // namespace ddpbench::modes::zero

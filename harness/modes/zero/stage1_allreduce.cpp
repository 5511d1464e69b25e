// stage1_allreduce.cpp — see stage1_allreduce.h.
#include "modes/zero/stage1_allreduce.h"

#include <torch/torch.h>

#include "scenarios/optim/clip_grad_norm.h"

namespace ddpbench::modes::zero {

Stage1Allreduce::Stage1Allreduce(ZeroShared& shared, int64_t bucket_bytes)
    : OwnerStage(shared),
      buckets_(shared, std::vector<int64_t>(shared.params.size(), 0), /*blocks=*/1, bucket_bytes,
               /*release_between_steps=*/false,
               [this](size_t index, GradientBuckets::Bucket& bucket) { launch(index, bucket); }),
      works_(buckets_.size()) {}

void Stage1Allreduce::launch(size_t index, GradientBuckets::Bucket& bucket) {
  bucket.flat.mul_(1.0 / shared_.comm.world_size());
  works_[index] = shared_.comm.allreduce_sum(bucket.flat);
}

void Stage1Allreduce::reduce() {
  buckets_.finish_backward();
  const std::shared_ptr<comm::Work> used =
      shared_.used.start(shared_.comm, shared_.params.front().device());
  shared_.bytes_per_step = 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    works_[b]->wait();
    works_[b].reset();
    const at::Tensor& flat = buckets_.buckets()[b].flat;
    shared_.bytes_per_step += flat.numel() * static_cast<int64_t>(flat.element_size());
  }
  used->wait();
  shared_.used.finish();
  // The averages are in the slots, which are the gradients.
  for (size_t i = 0; i < shared_.params.size(); ++i) {
    if (!shared_.used.anywhere(i)) shared_.params[i].mutable_grad().reset();  // None, as single's
  }
  buckets_.reset();
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

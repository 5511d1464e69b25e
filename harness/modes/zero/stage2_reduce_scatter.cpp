// stage2_reduce_scatter.cpp — see stage2_reduce_scatter.h.
#include "modes/zero/stage2_reduce_scatter.h"

#include <torch/torch.h>

#include "modes/common/layout_view.h"
#include "scenarios/optim/clip_grad_norm.h"

namespace ddpbench::modes::zero {

Stage2ReduceScatter::Stage2ReduceScatter(ZeroShared& shared, int64_t bucket_bytes)
    : OwnerStage(shared),
      buckets_(shared, shared.partition.owner, shared.mesh.shard().world_size(), bucket_bytes,
               /*release_between_steps=*/true,
               [this](size_t index, GradientBuckets::Bucket& bucket) { launch(index, bucket); }),
      scatters_(buckets_.size()) {}

void Stage2ReduceScatter::launch(size_t index, GradientBuckets::Bucket& bucket) {
  shared_.divide.apply_before(bucket.flat);
  scatters_[index] = shared_.mesh.shard().reduce_scatter_sum_async(bucket.flat);
}

void Stage2ReduceScatter::reduce() {
  std::vector<at::Tensor>& params = shared_.params;
  const int rank = shared_.mesh.shard().rank();
  buckets_.finish_backward();
  const std::shared_ptr<comm::Work> used =
      shared_.used.start(shared_.comm, params.front().device());
  // Each bucket's block of the sum: this rank's parameters' averaged gradients (under HSDP over
  // the replicas too), a view of the bucket on some backends (gloo).
  shared_.bytes_per_step = 0;
  for (const GradientBuckets::Bucket& bucket : buckets_.buckets()) {
    shared_.bytes_per_step +=
        bucket.flat.numel() * static_cast<int64_t>(bucket.flat.element_size());
  }
  const std::vector<at::Tensor> mine =
      finish_bucket_reductions(shared_.mesh, shared_.divide, shared_.hsdp_faults, scatters_,
                               /*owned=*/false, shared_.bytes_per_step);
  used->wait();
  shared_.used.finish();
  const ZeroPartition& partition = shared_.partition;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (const int64_t i : buckets_.buckets()[b].params) {
      at::Tensor& p = params[static_cast<size_t>(i)];
      if (partition.owner[static_cast<size_t>(i)] != rank ||
          !shared_.used.anywhere(static_cast<size_t>(i))) {
        // The others' gradients are theirs now: freed, as ZeRO-2 frees them; a parameter no
        // rank used keeps None, as single-device's.
        p.mutable_grad().reset();
        continue;
      }
      // Copied out of the block, which may be a view of the bucket: the bucket and its padding
      // go, and a rank holds its own gradients only (the memory table counts them). A rank that
      // used none of its own (a joined rank) receives them here too.
      p.mutable_grad() =
          view_in_layout_of(mine[b].narrow(0, buckets_.offset_in_block(i), p.numel()), p).clone();
    }
  }
  buckets_.reset();
}

void Stage2ReduceScatter::clip(double max_norm) {
  torch::NoGradGuard no_grad;
  const std::vector<at::Tensor>& params = shared_.params;
  // Each parameter's norm from its owner, zeros elsewhere: the sum over ranks is exact.
  at::Tensor norms = at::zeros({static_cast<int64_t>(params.size())}, params.front().options());
  std::vector<at::Tensor> mine;
  for (const int64_t i :
       shared_.partition.rank_params[static_cast<size_t>(shared_.mesh.shard().rank())]) {
    const at::Tensor& g = params[static_cast<size_t>(i)].grad();
    if (!g.defined()) continue;
    norms[i].copy_(g.norm(2));
    mine.push_back(g);
  }
  comm::allreduce_sum_blocking(shared_.mesh.shard(), norms);
  const at::Tensor coefficient = scenarios::clip_coefficient(norms.norm(2), max_norm);
  for (at::Tensor& g : mine) g.mul_(coefficient);
}

std::vector<at::Tensor> Stage2ReduceScatter::recorded_gradients() {
  // Checked steps only, outside the timed phases.
  torch::NoGradGuard no_grad;
  const std::vector<at::Tensor>& params = shared_.params;
  std::vector<at::Tensor> grads(params.size());
  comm::Communicator& shard = shared_.mesh.shard();
  for (int owner = 0; owner < shard.world_size(); ++owner) {
    std::vector<at::Tensor> theirs;
    for (const int64_t i : shared_.partition.rank_params[static_cast<size_t>(owner)]) {
      if (!shared_.used.anywhere(static_cast<size_t>(i))) continue;  // None on every rank
      const at::Tensor& own = params[static_cast<size_t>(i)].grad();
      at::Tensor g = owner == shard.rank() && own.defined()
                         ? own.clone()
                         : at::zeros_like(params[static_cast<size_t>(i)]);
      grads[static_cast<size_t>(i)] = g;
      theirs.push_back(g);
    }
    if (!theirs.empty()) shard.broadcast(theirs, owner);
  }
  return grads;
}

}  // namespace ddpbench::modes::zero

// stage2_reduce_scatter.h — ZeRO stage 2 in the zero mode: after backward, each gradient is
// averaged over the ranks (scaled by 1/K and summed) and reduce-scattered to its owner only; a
// rank keeps the averaged gradients of its own parameters and frees the others', as ZeRO-2 frees
// them. The optimizer step and the broadcasts are owner_stage.h's.
//
// Gradient clipping uses the whole model's norm: each rank contributes its own parameters' norms
// to one allreduce (each norm from one rank, zeros elsewhere, so the sum is exact), and the norm of
// those norms is what clip_grad_norm_ computes on the whole model (bit for bit).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "modes/zero/owner_stage.h"

namespace ddpbench::modes::zero {

class Stage2ReduceScatter : public OwnerStage {
 public:
  explicit Stage2ReduceScatter(ZeroShared& shared) : OwnerStage(shared) {}

  void reduce() override;
  // The used-parameter map's all-reduce over the world, and with replicas (HSDP) the reduced
  // shard's over them; one reduce-scatter in the shard group.
  int64_t reduction_allreduces() const override {
    return 1 + (shared_.mesh.replicas() != nullptr ? 1 : 0);
  }
  int64_t reduction_reduce_scatters() const override { return 1; }
  void clip(double max_norm) override;
  // Each gradient lives on its owner only: gathered for the record, one broadcast per owner.
  std::vector<at::Tensor> recorded_gradients() override;
};

}  // namespace ddpbench::modes::zero

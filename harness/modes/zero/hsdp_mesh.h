// hsdp_mesh.h — zero's 2-D mesh under --shard-group S (hybrid sharding, HSDP): the K ranks are
// K/S replicas of one S-way shard, as FSDP2's fully_shard lays parameters out as (Replicate(),
// Shard(0)) over init_device_mesh((K/S, S)): world rank r is rank r % S of shard group r / S (the
// ranks r - r % S .. + S - 1) and rank r / S of replica group r % S (the ranks r % S + j*S).
// Stages 2 and 3 shard over the shard group (what a rank owns, steps and gathers is 1/S of the
// model) and add one all-reduce of each rank's reduced shard over its replica group, so every
// replica of a shard holds the same average. With S = K there is one replica: no groups are made
// and the shard group is the world.
//
// Note [HSDP's divide factors]:
// How the sum over K ranks becomes their average is PyTorch 2.11's FSDP2
// (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py, _get_gradient_divide_factors and
// foreach_reduce), because the order of the divisions changes the rounding and issue
// pytorch/pytorch#155903 was FSDP and HSDP applying it differently. float32 and bfloat16 use
// ReduceOp.AVG on both collectives: the shard group's sum divided by S, then the replicas' sum
// of those divided by K/S (gloo's AVG is a sum, then a division). float64 and float16 ("overflow
// risk") sum in both collectives between a pre-division and a post-division: pre is the largest
// power of two p with K % p == 0 reached while K / p > p (PyTorch's loop), post = K / pre. The
// one-replica zero (S = K) keeps the scaling it always had (1/K before the sum, as DDP and
// ZeroRedundancyOptimizer under DDP), so nothing there moves.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/communicator.h"

namespace ddpbench::modes::zero {

// The divisions around the two collectives; 1 where PyTorch divides by nothing.
struct DivideFactors {
  double before = 1;        // before the shard group's reduce-scatter
  double after_shard = 1;   // after it (AVG over the shard group)
  double after = 1;         // after the replicas' all-reduce
  bool one_replica = true;  // S = K: `before` is applied as the product with 1/K it always was

  // On the reduce-scatter's input.
  void apply_before(at::Tensor& input) const;
};

// The HSDP faults of this step (every rank): `replica` skips the replicas' all-reduce, `divide`
// averages over the shard group only (multiplies the average by K/S).
struct HsdpFaults {
  bool skip_replicas = false;
  bool over_shard_group = false;
};

// PyTorch 2.11 FSDP2's factors for K ranks, S of them per shard group, reducing `dtype`.
DivideFactors hsdp_divide_factors(int64_t world, int64_t shard_group, at::ScalarType dtype);

class HsdpMesh {
 public:
  // Collective over `world` (two splits) when shard_group < K; nothing otherwise.
  // `shard_group` 0 means K.
  HsdpMesh(comm::Communicator& world, int64_t shard_group);

  // The ranks this rank shards with (the world when there is one replica).
  comm::Communicator& shard() { return shard_ ? *shard_ : world_; }
  // The ranks that hold the same shard as this one; null when there is one replica.
  comm::Communicator* replicas() { return replicas_.get(); }
  int64_t replica_count() const { return replicas_ ? replicas_->world_size() : 1; }

 private:
  comm::Communicator& world_;
  std::unique_ptr<comm::Communicator> shard_;
  std::unique_ptr<comm::Communicator> replicas_;
};

// Collective over `mesh`, after each bucket's reduce-scatter in the shard group was started with
// `factors.before` applied (zero stages 2 and 3): waits for each in turn and starts its block's
// replica all-reduce at once, so that it overlaps the next one's wait; then each block gets the
// shard group's AVG, the replicas' sum and the final division, in place, with this step's
// `faults`. Returns the blocks, copied out of the reduce-scatters' inputs when `owned`
// (ScatterWork::owned_block), and adds the bytes the replica all-reduces put on the wire to
// `replica_bytes`. The scatters are spent.
std::vector<at::Tensor> finish_bucket_reductions(HsdpMesh& mesh, const DivideFactors& factors,
                                                 const HsdpFaults& faults,
                                                 std::vector<comm::ScatterWork>& scatters,
                                                 bool owned, int64_t& replica_bytes);

}  // namespace ddpbench::modes::zero

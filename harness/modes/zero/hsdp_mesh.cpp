// hsdp_mesh.cpp — see hsdp_mesh.h.
#include "modes/zero/hsdp_mesh.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <stdexcept>

namespace ddpbench::modes::zero {

DivideFactors hsdp_divide_factors(int64_t world, int64_t shard_group, at::ScalarType dtype) {
  DivideFactors f;
  if (shard_group <= 0 || shard_group >= world) {
    f.before = static_cast<double>(world);  // the one-replica zero's 1/K before the sum
    return f;
  }
  f.one_replica = false;
  const bool overflow_risk = dtype != at::kFloat && dtype != at::kBFloat16;
  if (!overflow_risk) {
    f.after_shard = static_cast<double>(shard_group);
    f.after = static_cast<double>(world / shard_group);
    return f;
  }
  int64_t pre = 1;
  while (world % pre == 0 && world / pre > pre) pre *= 2;
  f.before = static_cast<double>(pre);
  f.after = static_cast<double>(world) / static_cast<double>(pre);
  return f;
}

void DivideFactors::apply_before(at::Tensor& input) const {
  if (one_replica) {
    input.mul_(1.0 / before);
  } else if (before != 1) {
    input.div_(before);
  }
}

HsdpMesh::HsdpMesh(comm::Communicator& world, int64_t shard_group) : world_(world) {
  const int64_t k = world.world_size();
  if (shard_group <= 0 || shard_group >= k) return;
  if (k % shard_group != 0) {
    throw std::logic_error(fmt::format("HsdpMesh: {} ranks in groups of {}", k, shard_group));
  }
  const auto s = static_cast<int>(shard_group);
  shard_ = world.split(world.rank() / s);
  replicas_ = world.split(world.rank() % s);
}

int64_t finish_hsdp_reduction(HsdpMesh& mesh, const DivideFactors& factors, at::Tensor& mine,
                              const HsdpFaults& faults) {
  int64_t bytes = 0;
  start_replica_reduction(mesh, factors, mine, faults, bytes)->wait();
  finish_replica_reduction(mesh, factors, mine, faults);
  return bytes;
}

std::shared_ptr<comm::Work> start_replica_reduction(HsdpMesh& mesh, const DivideFactors& factors,
                                                    at::Tensor& mine, const HsdpFaults& faults,
                                                    int64_t& bytes) {
  // tensor.div_, as FSDP2's _div_if_needed and gloo's AVG: a division, not a reciprocal's product.
  if (factors.after_shard != 1) mine.div_(factors.after_shard);
  bytes = 0;
  comm::Communicator* replicas = mesh.replicas();
  if (replicas == nullptr || faults.skip_replicas) return std::make_shared<comm::CompletedWork>();
  bytes = mine.numel() * static_cast<int64_t>(mine.element_size());
  return replicas->allreduce_sum(mine);
}

void finish_replica_reduction(const HsdpMesh& mesh, const DivideFactors& factors, at::Tensor& mine,
                              const HsdpFaults& faults) {
  if (factors.after != 1) mine.div_(factors.after);
  // The divide-factor bug: the sum over K ranks divided by S alone.
  if (faults.over_shard_group) mine.mul_(static_cast<double>(mesh.replica_count()));
}

}  // namespace ddpbench::modes::zero

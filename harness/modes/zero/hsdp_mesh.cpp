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

std::vector<at::Tensor> finish_bucket_reductions(HsdpMesh& mesh, const DivideFactors& factors,
                                                 const HsdpFaults& faults,
                                                 std::vector<comm::ScatterWork>& scatters,
                                                 bool owned, int64_t& replica_bytes) {
  std::vector<at::Tensor> blocks(scatters.size());
  std::vector<std::shared_ptr<comm::Work>> replicas(scatters.size());
  comm::Communicator* group = faults.skip_replicas ? nullptr : mesh.replicas();
  for (size_t b = 0; b < scatters.size(); ++b) {
    scatters[b].work->wait();
    blocks[b] = owned ? scatters[b].owned_block() : std::move(scatters[b].block);
    scatters[b] = {};
    // tensor.div_, as FSDP2's _div_if_needed and gloo's AVG: a division, not a reciprocal's
    // product.
    if (factors.after_shard != 1) blocks[b].div_(factors.after_shard);
    if (group != nullptr) {
      replica_bytes += blocks[b].numel() * static_cast<int64_t>(blocks[b].element_size());
      replicas[b] = group->allreduce_sum(blocks[b]);
    }
  }
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (replicas[b]) replicas[b]->wait();
    if (factors.after != 1) blocks[b].div_(factors.after);
    // The divide-factor bug: the sum over K ranks divided by S alone.
    if (faults.over_shard_group) blocks[b].mul_(static_cast<double>(mesh.replica_count()));
  }
  return blocks;
}

}  // namespace ddpbench::modes::zero

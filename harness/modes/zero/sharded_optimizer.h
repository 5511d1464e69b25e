// sharded_optimizer.h — the pieces of ZeRO stages 1 and 2's optimizer step in the zero mode
// (issue 35), as PyTorch's ZeroRedundancyOptimizer takes it: each rank's optimizer is built over
// only the parameters it owns (zero_partition.h), so it keeps the optimizer state of about 1/K of
// the model; after the gradients are averaged over the ranks, it updates the owned parameters and
// then every rank's parameters are broadcast from their owner, so that every rank holds the whole
// updated model again. The gradients' reduction and the step itself are zero_path's.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "comm/communicator.h"
#include "modes/zero/zero_partition.h"

namespace ddpbench::modes::zero {

// The partition of `parameters` (one parameter group, the model's order) over `world_size` ranks.
ZeroPartition partition_of(const std::vector<at::Tensor>& parameters, int64_t world_size);

// The parameters of `parameters` that `rank` owns under `partition`, in the partition's order.
std::vector<at::Tensor> owned_parameters(const std::vector<at::Tensor>& parameters,
                                         const ZeroPartition& partition, int rank);

// Collective: every rank's parameters from their owner, one coalesced broadcast per owner that has
// any (torch's ZeroRedundancyOptimizer broadcasts per rank as well). Measured on cifar_resnet18 at
// 2 ranks over gloo: one allgather of padded flat shards took 4 times as long.
void broadcast_from_owners(const std::vector<at::Tensor>& parameters,
                           const ZeroPartition& partition, comm::Communicator& comm);

}  // namespace ddpbench::modes::zero

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

// Makes each rank's owned parameters views of one flat buffer, in the partition's order (set_data:
// autograd identity, hooks and the optimizer's keys stay), as ZeroRedundancyOptimizer's
// parameters_as_bucket_view does, so that broadcast_from_owners sends them as they lie, with no
// copy in or out. Returns the buffers, one per rank (undefined where a rank owns nothing); none
// when the parameters do not share one dtype and device, which only a flat per (dtype, device)
// could hold (broadcast_from_owners then coalesces per call).
std::vector<at::Tensor> pack_by_owner(const std::vector<at::Tensor>& parameters,
                                      const ZeroPartition& partition);

// Collective: every rank's parameters from their owner, one broadcast per owner that has any
// (torch's ZeroRedundancyOptimizer broadcasts per rank as well): of `packed[owner]`,
// pack_by_owner's buffer, when given, else coalesced for the call. Measured on cifar_resnet18 at 2
// ranks over gloo: one allgather of padded flat shards took 4 times as long.
void broadcast_from_owners(const std::vector<at::Tensor>& parameters,
                           const ZeroPartition& partition, comm::Communicator& comm,
                           const std::vector<at::Tensor>& packed = {});

}  // namespace ddpbench::modes::zero

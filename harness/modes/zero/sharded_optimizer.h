// sharded_optimizer.h — ZeRO stage 1's optimizer step for the zero mode (issue 35), as PyTorch's
// ZeroRedundancyOptimizer takes it: each rank's optimizer holds only the parameters it owns
// (zero_partition.h), so it keeps the optimizer state of about 1/K of the model; after the
// gradients are averaged over the ranks, step() updates the owned parameters with that local
// optimizer and then broadcasts every rank's parameters from their owner, so that every rank
// holds the whole updated model again. The gradients' reduction is the caller's.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "modes/zero/zero_partition.h"
#include "scenarios/scenario.h"

namespace torch::optim {
class Optimizer;
}

namespace ddpbench::modes::zero {

class ShardedOptimizer {
 public:
  // `parameters`: the model's, in its order (one parameter group), the same on every rank.
  ShardedOptimizer(std::vector<at::Tensor> parameters, const scenarios::OptimizerSpec& spec,
                   comm::Communicator& comm);
  ~ShardedOptimizer();

  // The local optimizer's step on this rank's parameters, then the owners' broadcasts.
  void step();

  const ZeroPartition& partition() const { return partition_; }
  // The optimizer over this rank's parameters, in the partition's order (ZeroRedundancy-
  // Optimizer's `optim`): its state is this rank's shard of the optimizer state.
  torch::optim::Optimizer& local() { return *local_; }
  // Bytes of optimizer state this rank holds now, counted from its tensors.
  int64_t state_bytes();

 private:
  std::vector<at::Tensor> parameters_;
  comm::Communicator& comm_;
  ZeroPartition partition_;
  std::unique_ptr<torch::optim::Optimizer> local_;
};

}  // namespace ddpbench::modes::zero

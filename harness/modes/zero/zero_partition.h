// zero_partition.h — which rank owns which parameter under ZeRO (issue 35, the `zero` mode's
// sharded optimizer state): PyTorch's ZeroRedundancyOptimizer partition, "sorted-greedy". Group by
// group, in the optimizer's order, the group's parameters are sorted by element count, largest
// first (stable: equal counts keep their order), and each goes whole to the rank with the smallest
// running total so far (ties to the lowest rank); the totals carry across groups. A rank's local
// optimizer holds its parameters in that assignment order, group by group. Pure arithmetic: no
// torch, no communication. reference/zero_partition_oracle.py checks it against PyTorch's own.
#pragma once

#include <cstdint>
#include <vector>

namespace ddpbench::modes::zero {

struct ZeroPartition {
  // Per parameter, numbered across the groups in the optimizer's order: the rank that owns it.
  std::vector<int64_t> owner;
  // Per rank: its parameters' numbers in its local optimizer's order.
  std::vector<std::vector<int64_t>> rank_params;
  // Per rank: the elements it owns.
  std::vector<int64_t> rank_numel;
};

// `group_numels`: per parameter group, each parameter's element count in the group's order.
// Throws std::invalid_argument for world_size < 1 or a negative count.
ZeroPartition partition_parameters(const std::vector<std::vector<int64_t>>& group_numels,
                                   int64_t world_size);

}  // namespace ddpbench::modes::zero

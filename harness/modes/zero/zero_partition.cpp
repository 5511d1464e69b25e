// zero_partition.cpp — see zero_partition.h.
#include "modes/zero/zero_partition.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace ddpbench::modes::zero {

ZeroPartition partition_parameters(const std::vector<std::vector<int64_t>>& group_numels,
                                   int64_t world_size) {
  if (world_size < 1) {
    throw std::invalid_argument("partition_parameters: world size " + std::to_string(world_size));
  }
  ZeroPartition p;
  p.rank_params.resize(static_cast<size_t>(world_size));
  p.rank_numel.assign(static_cast<size_t>(world_size), 0);
  int64_t first = 0;  // the number of the group's first parameter
  for (const std::vector<int64_t>& numels : group_numels) {
    std::vector<int64_t> order(numels.size());
    std::iota(order.begin(), order.end(), int64_t{0});
    // Python's sorted(..., reverse=True) is stable too: equal counts keep the group's order.
    std::stable_sort(order.begin(), order.end(), [&numels](int64_t a, int64_t b) {
      return numels[static_cast<size_t>(a)] > numels[static_cast<size_t>(b)];
    });
    p.owner.resize(p.owner.size() + numels.size());
    for (const int64_t i : order) {
      const int64_t numel = numels[static_cast<size_t>(i)];
      if (numel < 0) {
        throw std::invalid_argument("partition_parameters: negative element count " +
                                    std::to_string(numel));
      }
      // min_element returns the first of equal minima: ties to the lowest rank.
      const auto rank = static_cast<int64_t>(
          std::min_element(p.rank_numel.begin(), p.rank_numel.end()) - p.rank_numel.begin());
      p.owner[static_cast<size_t>(first + i)] = rank;
      p.rank_params[static_cast<size_t>(rank)].push_back(first + i);
      p.rank_numel[static_cast<size_t>(rank)] += numel;
    }
    first += static_cast<int64_t>(numels.size());
  }
  return p;
}

}  // namespace ddpbench::modes::zero

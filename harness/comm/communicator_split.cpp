// communicator_split.cpp — see communicator_split.h.
#include "comm/communicator_split.h"

#include <fmt/format.h>

namespace ddpbench::comm {

std::unique_ptr<Communicator> make_split_communicator(const CommunicatorRequest& world,
                                                      const SplitGroup& group) {
  CommunicatorRequest r = world;
  r.rank = group.rank;
  r.world_size = group.size;
  if (world.store)
    r.store = world.store->prefixed(fmt::format("split{}/{}/", group.number, group.color));
  // shm_names.h removes every segment under the run's prefix: a group's stay under it.
  if (!world.shm_prefix.empty()) {
    r.shm_prefix = fmt::format("{}-split{}c{}", world.shm_prefix, group.number, group.color);
  }
  r.mpi_color = group.color;
  return make_communicator(r);
}

SplitGroup split_group(const std::vector<int64_t>& colors, int rank, int64_t number) {
  SplitGroup g;
  g.color = static_cast<int>(colors.at(static_cast<size_t>(rank)));
  g.number = number;
  g.size = 0;
  for (size_t r = 0; r < colors.size(); ++r) {
    if (colors[r] != g.color) continue;
    if (static_cast<int>(r) == rank) g.rank = g.size;
    ++g.size;
  }
  return g;
}

}  // namespace ddpbench::comm

// communicator_split.h — how a launched rank's communicator splits into groups
// (Communicator::split): the ranks of one color get a backend communicator of their own, made as
// the world's was (comm/communicator_factory.h) but with a rendezvous of its own inside the
// world's: gloo, nccl and shm meet through the world's store under a key prefix naming the split
// and the color, shm's segments are named under the run's prefix (so the launching parent still
// removes them whatever ends the run), and mpi splits MPI_COMM_WORLD. Every rank splits the same
// number of times in the same order, so a split's number names it alike on every rank.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "comm/communicator.h"
#include "comm/communicator_factory.h"

namespace ddpbench::comm {

// One rank's group of one split.
struct SplitGroup {
  int color = 0;
  int rank = 0;        // in the group, in the world's rank order
  int size = 1;        // ranks with this color
  int64_t number = 0;  // the split's number: 0 for the world's first, then 1, ...
};

// Makes this rank's communicator of `group`.
using Splitter = std::function<std::unique_ptr<Communicator>(const SplitGroup& group)>;

// The group's communicator, from the request that made the world's (collective over the world:
// every rank calls it for its own group at the same point).
std::unique_ptr<Communicator> make_split_communicator(const CommunicatorRequest& world,
                                                      const SplitGroup& group);

// This rank's group of a split by `color`, from every rank's color in world rank order.
SplitGroup split_group(const std::vector<int64_t>& colors, int rank, int64_t number);

}  // namespace ddpbench::comm
